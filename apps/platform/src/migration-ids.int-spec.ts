import { CONTEXT_SCHEMAS, type ContextName } from '@rigmarket/contracts';
import { Database, coreMigrations, runMigrations } from '@rigmarket/event-sourcing';
import { ALL_CONTEXTS } from './platform';

const AUTH = ['auth-0001-api-keys', 'auth-0002-api-key-expiry'];
/** The ids a store recorded before the renumbering (then sorted by id), per context, core ones first. */
const FORMER: Record<ContextName, string[]> = {
  identity: [
    '0002-identity-read-models',
    '0003-tfa',
    '0004-user-credit',
    '0005-user-credit-exact-money',
    ...AUTH,
    'sessions-0001-api-key-expiry',
  ],
  marketplace: [
    '0002-machines-read-model',
    '0003-machines-offers-templates',
    '0004-volumes',
    '0005-ledger',
    '0006-instance-allocations',
    '0007-billing-periods',
    '0007-maintenance-windows',
    '0008-template-usage',
    '0009-machine-last-heartbeat',
    '0010-ledger-exact-money',
    '0011-ledger-earned-charges',
    ...AUTH,
  ],
  instance: [
    '0002-instance-read-models',
    '0003-create-idempotency',
    '0004-create-idempotency-sealed',
    '0005-market-machines-verification',
    '0006-market-volumes-and-vms',
    '0007-market-machines-geolocation',
    '0008-market-volume-offers',
    '0009-account-credit',
    'agent-0001-agent-machines',
    ...AUTH,
    'host-0001-host-commands',
    'registry-0001-pending-provision-login',
    'sync-0001-maintenance-and-sync-notices',
  ],
  sync: ['0002-sync-maintenance-read-models', '0003-agent-machines', ...AUTH],
};
const CORE = ['0001-event-store', '0001-dead-letters', '0001-snapshots', '0001-reactor-queue'];

/**
 * Migrations were renumbered (one folder per app, 0001.. in run order). A store that applied them under
 * their former ids must start without running any of them again (their DDL would fail on existing tables),
 * and run only the migrations that came after.
 */
describe('a store migrated before the renumbering', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  });
  afterAll(async () => {
    await db.close();
  });

  it('runs only the migrations added since, and records the others under their new ids', async () => {
    for (const context of ALL_CONTEXTS) {
      const schema = CONTEXT_SCHEMAS[context.context];
      const former = FORMER[context.context];
      // The old store: the migrations that existed then (as many as the former ids), under the former ids.
      const then = [...coreMigrations.slice(0, CORE.length), ...context.migrations.slice(0, former.length)];
      await runMigrations(db, schema, then);
      await db.execute(`DELETE FROM ${schema}.migrations`);
      for (const id of [...CORE, ...former])
        await db.execute(`INSERT INTO ${schema}.migrations (id) VALUES ($1)`, [id]);

      const added = [...coreMigrations.slice(CORE.length), ...context.migrations.slice(former.length)].map(
        (m) => m.id,
      );
      expect(await runMigrations(db, schema, [...coreMigrations, ...context.migrations])).toEqual(added);
      const ids = new Set(
        (await db.query<{ id: string }>(`SELECT id FROM ${schema}.migrations`)).map((r) => r.id),
      );
      expect(
        [...coreMigrations, ...context.migrations].filter((m) => !ids.has(m.id)).map((m) => m.id),
      ).toEqual([]);
    }
  });
});
