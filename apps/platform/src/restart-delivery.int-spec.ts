import { Database } from '@rigmarket/event-sourcing';
import request from 'supertest';
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

describe('/readyz: a subscribed projection far behind its sources makes the platform not ready', () => {
  let db: Database;
  const before = process.env.RIGMARKET_READY_MAX_LAG_MS;

  beforeAll(async () => {
    process.env.RIGMARKET_READY_MAX_LAG_MS = '30000';
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  });
  afterAll(async () => {
    if (before === undefined) delete process.env.RIGMARKET_READY_MAX_LAG_MS;
    else process.env.RIGMARKET_READY_MAX_LAG_MS = before;
    await db.close();
  });

  it('answers 503 naming the projection while an identity event older than the limit is not applied', async () => {
    const app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: 'ready-admin' },
    });
    try {
      await eventually(
        async () => ((await request(app.getHttpServer()).get('/readyz')).status === 200 ? true : undefined),
        10_000,
        'ready at first',
      );
      await eventually(
        async () =>
          (await db.query(`SELECT 1 FROM marketplace.admin_users`)).length === 1 ? true : undefined,
        10_000,
        'the admin in marketplace.admin_users',
      );
      // An event stored a minute ago that never reached marketplace (written past the outbox, as a lost
      // delivery would leave it).
      await db.execute(
        `INSERT INTO identity.events (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at, recorded_at, hash)
         VALUES (gen_random_uuid(), 'user-999999', 'user', 1, 'UserRegistered', 1, '{}'::jsonb, '{}'::jsonb, now() - interval '1 minute', now() - interval '1 minute', 'not chained')`,
      );
      const res = await request(app.getHttpServer()).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ success: false, error: 'service_unavailable' });
      expect(res.body.msg).toMatch(/marketplace\/admin_users is 1 event\(s\) behind/);
    } finally {
      await app.close();
    }
  }, 60_000);
});
