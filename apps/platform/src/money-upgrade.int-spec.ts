import { randomUUID } from 'node:crypto';
import {
  Database,
  type Migration,
  eventStoreMigration,
  reactorQueueMigration,
  rebuildProjection,
  runMigrations,
} from '@rigmarket/event-sourcing';
import { identityContext } from '@rigmarket/identity-2fa';
import { ledgerImbalances, marketplaceContext } from '@rigmarket/marketplace-api';

/**
 * A store from before exact money: version 1 ledger events with float dollars, one of them the unbounded
 * charge (1e308) that overflowed `rebuild` at identity.user_credit, and the old DOUBLE PRECISION read models
 * summed from them. The new migrations turn the columns exact and replay the ledger; the result balances and
 * rebuilds without overflow.
 */
describe('upgrading a ledger of float dollars to exact money', () => {
  let db: Database;
  const NEW = new Set(['0010-ledger-exact-money', '0004-user-credit-exact-money']);
  const migrate = (schema: string, migrations: readonly Migration[], skipNew: boolean) =>
    runMigrations(db, schema, [
      eventStoreMigration,
      reactorQueueMigration,
      ...migrations.filter((m) => !(skipNew && NEW.has(m.id))),
    ]);

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  });
  afterAll(async () => {
    await db.close();
  });

  it('migrates and rebuilds to exact balances that agree, the unbounded amount voided', async () => {
    await migrate('marketplace', marketplaceContext.migrations, true);
    await migrate('identity', identityContext.migrations, true);
    const at = '2026-05-01T12:00:00.000Z';
    const v1: Array<[string, number, string, Record<string, unknown>]> = [
      ['ledger-2', 1, 'CreditGranted', { userId: 2, amount: 0.1, grantedBy: 1, note: null, at }],
      ['ledger-2', 2, 'CreditGranted', { userId: 2, amount: 0.2, grantedBy: 1, note: null, at }],
      ['ledger-2', 3, 'AccountCharged', charge(2, 0.07, at)],
      ['ledger-7', 1, 'HostEarned', { userId: 7, machineId: 42, instanceId: 9, amount: 0.07, at }],
      ['ledger-3', 1, 'AccountCharged', charge(3, 1e308, at)],
      ['ledger-7', 2, 'HostEarned', { userId: 7, machineId: 42, instanceId: 9, amount: 1e308, at }],
    ];
    for (const [stream, position, type, data] of v1) {
      await db.query(
        `INSERT INTO marketplace.events (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at)
         VALUES ($1, $2, 'ledger', $3, $4, 1, $5, '{}', $6)`,
        [randomUUID(), stream, position, type, JSON.stringify(data), at],
      );
    }
    // The old read models as the float projections left them (the poisoned charge in them too).
    await db.query(
      `INSERT INTO marketplace.balances (user_id, balance) VALUES (2, 0.30000000000000004 - 0.07), (3, -1e308), (7, 1e308)`,
    );
    await db.query(`INSERT INTO identity.user_credit (user_id, credit) VALUES (2, 0.23)`);

    expect(await migrate('marketplace', marketplaceContext.migrations, false)).toEqual([
      '0010-ledger-exact-money',
    ]);
    expect(await migrate('identity', identityContext.migrations, false)).toEqual([
      '0004-user-credit-exact-money',
    ]);
    const balances = async () => ({
      marketplace: await db.query(`SELECT user_id, balance::text FROM marketplace.balances ORDER BY user_id`),
      identity: await db.query(`SELECT user_id, credit::text FROM identity.user_credit ORDER BY user_id`),
    });
    const expected = {
      marketplace: [
        { user_id: 2, balance: '0.230000' },
        { user_id: 3, balance: '0.000000' },
        { user_id: 7, balance: '0.070000' },
      ],
      identity: [
        { user_id: 2, credit: '0.230000' },
        { user_id: 7, credit: '0.070000' },
      ],
    };
    expect(await balances()).toEqual(expected);
    expect(await db.transaction((sql) => ledgerImbalances(sql))).toEqual([]);

    // `rigmarket rebuild` of both: no numeric overflow, the same rows.
    const ledger = marketplaceContext.inlineProjections.find((p) => p.name === 'ledger')!;
    const userCredit = identityContext.subscribedProjections.find((p) => p.name === 'user_credit')!;
    expect(await rebuildProjection(db, 'marketplace', ledger)).toBe(6);
    expect(await rebuildProjection(db, 'identity', userCredit)).toBe(6);
    expect(await balances()).toEqual(expected);
  });
});

function charge(userId: number, amount: number, at: string) {
  return {
    userId,
    instanceId: 9,
    machineId: 42,
    kind: 'gpu',
    amount,
    periodStart: '2026-05-01T11:00:00.000Z',
    periodEnd: at,
    at,
    hostId: 7,
  };
}
