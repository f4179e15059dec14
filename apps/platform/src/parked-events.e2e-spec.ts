import type { INestApplication } from '@nestjs/common';
import { Database, type Transport, deadLetterLogger } from '@rigmarket/event-sourcing';
import { InProcessTransport, KafkaTransport } from '@rigmarket/messaging';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { runOperatorCli } from './testing/operator-cli';

const ADMIN_KEY = 'parked-events-admin-key';

/**
 * No silent loss (docs/reliability.md): a subscribed projection that fails on an event logs it at error with
 * the event id, retries, parks it in its context's dead_letters; `rigmarket projections` and /readyz show
 * it; once the fault is removed `rigmarket retry` applies it and the read model equals its events.
 */
async function kafka(): Promise<Transport> {
  const transport = new KafkaTransport({
    brokers: requiredEnv('KAFKA_BROKERS').split(','),
    clientId: 'parked-events',
    namespace: `${uniqueName('parked')}.`,
  });
  await transport.ensureTopics();
  return transport;
}

describe.each([
  ['in-process transport', async (): Promise<Transport> => new InProcessTransport()],
  ['Kafka', kafka],
])('a projection that fails on an event (%s)', (_transportName, makeTransport) => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Database;
  let app: INestApplication;
  let transport: Transport;
  const cli = (...args: string[]) => runOperatorCli(database.url, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await Database.connect({ kind: 'postgres', url: database.url });
    transport = await makeTransport();
    app = await createEmbeddedApp({
      db,
      transport,
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    await app.init();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await transport?.close();
    await db?.close();
    await database?.drop();
  });

  it('is logged with the event id, parked, shown by projections and /readyz, and applied by retry', async () => {
    const http = () => request(app.getHttpServer());
    await http().get('/readyz').expect(200);
    const errors = jest.spyOn(deadLetterLogger, 'error');
    // the fault: sync-maintenance's copy of the API keys cannot be written
    await db.execute(`ALTER TABLE sync_maintenance.auth_api_keys RENAME TO auth_api_keys_away`);
    const made = await http()
      .post('/api/v0/auth/apikeys/')
      .set('Authorization', `Bearer ${ADMIN_KEY}`)
      .send({ name: 'parked' });
    expect(made.status).toBe(201);
    const keyId = made.body.id as number;

    const [parked] = await eventually(async () => {
      const rows = await db.query<{ subscriber: string; event_id: string; error: string; attempts: number }>(
        `SELECT subscriber, event_id, error, attempts FROM sync_maintenance.dead_letters`,
      );
      return rows.length ? rows : undefined;
    }, 20_000);
    expect(parked).toMatchObject({ subscriber: 'auth_api_keys', attempts: 3 });
    expect(parked!.error).toContain('auth_api_keys');
    const logged = errors.mock.calls.map((c) => String(c[0]));
    expect(logged.filter((l) => l.includes(`event ${parked!.event_id}`)).length).toBeGreaterThanOrEqual(3);
    expect(
      logged.some((l) => l.includes(`${parked!.event_id} parked in sync_maintenance.dead_letters`)),
    ).toBe(true);
    // the other contexts applied it (those subscribed after sync-maintenance a moment later)
    await eventually(
      async () =>
        (await db.query(`SELECT 1 FROM marketplace.auth_api_keys WHERE key_id = $1`, [keyId])).length === 1
          ? true
          : undefined,
      10_000,
      'the key in marketplace',
    );

    const ready = await http().get('/readyz').expect(503);
    expect(ready.body).toMatchObject({ success: false, error: 'service_unavailable' });
    expect(ready.body.msg).toContain('sync_maintenance/auth_api_keys has 1 parked event(s)');
    // and in the metrics an operator alerts on (docs/operations.md, Metrics)
    expect((await http().get('/metrics').expect(200)).text).toMatch(
      /^rigmarket_parked_events\{context="sync",subscriber="auth_api_keys"\} 1$/m,
    );

    const listed = await cli('projections');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /sync\tauth_api_keys\tv2\tidentity\/api_key,instance\/instance\tlag \d+\tparked 1\tlast error: .*auth_api_keys/,
    );

    // still broken: retry keeps it parked and says so
    const early = await cli('retry');
    expect(early.code).toBe(1);
    expect(early.stdout).toContain('sync: 0 parked event(s) applied, 1 still failing');

    await db.execute(`ALTER TABLE sync_maintenance.auth_api_keys_away RENAME TO auth_api_keys`);
    const retried = await cli('retry');
    expect(retried.stdout).toContain('sync: 1 parked event(s) applied, 0 still failing');
    expect(retried.code).toBe(0);
    expect(
      await db.query(`SELECT 1 FROM sync_maintenance.auth_api_keys WHERE key_id = $1`, [keyId]),
    ).toHaveLength(1);
    expect(await db.query(`SELECT 1 FROM sync_maintenance.dead_letters`)).toHaveLength(0);
    await http().get('/readyz').expect(200);
    errors.mockRestore();
  }, 90_000);
});
