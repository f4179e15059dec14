import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually } from '@rigmarket/testing';
import { ALL_CONTEXTS, createEmbeddedApp } from './platform';
import { verify } from './verify';

/**
 * Embedded mode after a crash: events committed in one context whose outbox rows were not yet published
 * must reach the other contexts' read models once the platform is up again. The in-process transport keeps
 * nothing for a subscriber that registers later, and the contexts start one after another, so a relay that
 * published at its context's start lost them for every context started after it (the drift that
 * `rigmarket verify` found after kill -9).
 */
describe('embedded restart: events left unpublished by a crash reach every context', () => {
  let db: Database;

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  });
  afterAll(async () => {
    await db.close();
  });

  const startApp = () =>
    createEmbeddedApp({ db, transport: new InProcessTransport(), identity: { adminKey: 'restart-admin' } });

  it('delivers identity outbox rows to marketplace after a restart, and verify finds no difference', async () => {
    const first = await startApp();
    // The admin account identity seeds at start reaches marketplace's admin_users.
    await eventually(
      async () => ((await db.query(`SELECT 1 FROM marketplace.admin_users`)).length === 1 ? true : undefined),
      10_000,
      'the admin in marketplace.admin_users',
    );
    await first.close();

    // The state a kill -9 leaves between identity's commit and its relay's publish: the rows unpublished,
    // marketplace never told.
    await db.execute(`UPDATE identity.outbox SET published_at = NULL`);
    await db.execute(`DELETE FROM marketplace.admin_users`);
    await db.execute(`DELETE FROM marketplace.projection_stream_positions WHERE projection = 'admin_users'`);

    const second = await startApp();
    try {
      await eventually(
        async () =>
          (await db.query(`SELECT 1 FROM marketplace.admin_users`)).length === 1 ? true : undefined,
        10_000,
        'the admin in marketplace.admin_users after the restart',
      );
      const lines: string[] = [];
      const result = await verify(db, ALL_CONTEXTS, (line) => lines.push(line));
      expect(result.differences).toEqual([]);
      expect(result.failures).toEqual([]);
      expect({ ok: result.ok, lines }).toMatchObject({ ok: true });
    } finally {
      await second.close();
    }
  }, 60_000);
});
