import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { CONTEXT_SCHEMAS, type EventEnvelope } from '@rigmarket/contracts';
import { Database, READ_MODEL_CHANNEL, applyProjection } from '@rigmarket/event-sourcing';
import { authKeysProjection, createPlatformApp } from '@rigmarket/http-kit';
import { IdentityModule } from '@rigmarket/identity-2fa';
import { KafkaTransport } from '@rigmarket/messaging';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { Client } from 'pg';
import request from 'supertest';

const ADMIN_KEY = 'revocation-admin-key';
const MARKETPLACE_PORT = 18182;

/**
 * Distributed mode: identity-2fa in this process, marketplace-api as its own OS process, sharing only
 * PostgreSQL (separate schemas) and Kafka. A key deleted or reset in identity must be refused there.
 */
describe('a key deleted in identity-2fa is refused by another app process', () => {
  let identity: INestApplication;
  let transport: KafkaTransport;
  let db: Database;
  let drop: () => Promise<void>;
  let url: string;
  let marketplace: ChildProcess;
  const namespace = `${uniqueName('revoke')}.`;
  const marketplaceUrl = `http://127.0.0.1:${MARKETPLACE_PORT}`;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    url = database.url;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    transport = new KafkaTransport({
      brokers: requiredEnv('KAFKA_BROKERS').split(','),
      clientId: 'identity-it',
      namespace,
    });
    await transport.ensureTopics();
    identity = await createPlatformApp({
      db,
      transport,
      modules: [IdentityModule.forRoot({ adminKey: ADMIN_KEY })],
    });
    await identity.init();
    marketplace = spawn(process.execPath, [join(__dirname, '../../marketplace-api/dist/main.js')], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        KAFKA_BROKERS: requiredEnv('KAFKA_BROKERS'),
        RIGMARKET_KAFKA_NAMESPACE: namespace,
        PORT: String(MARKETPLACE_PORT),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await eventually(
      async () => ((await request(marketplaceUrl).get('/readyz')).status === 200 ? true : undefined),
      60_000,
      'marketplace-api to start',
    );
  });

  afterAll(async () => {
    marketplace?.kill('SIGTERM');
    await identity?.close();
    await transport?.close();
    await db?.close();
    await drop?.();
  });

  const machinesWith = (key: string) =>
    request(marketplaceUrl).get('/api/v0/machines?owner=me').set('Authorization', `Bearer ${key}`);
  /** Waits until marketplace-api answers `key` with `status` (what the key's last event there makes of it). */
  const untilMarketplaceAnswers = (key: string, status: number, ms: number, what: string) =>
    eventually(async () => ((await machinesWith(key)).status === status ? true : undefined), ms, what);
  /** An API key the admin creates in identity with `body`, once marketplace-api answers it with `status`. */
  const keyInMarketplace = async (body: object, status = 200): Promise<{ id: number; key: string }> => {
    const created = await request(identity.getHttpServer())
      .post('/api/v0/auth/apikeys/')
      .set('Authorization', `Bearer ${ADMIN_KEY}`)
      .send(body)
      .expect(201);
    await untilMarketplaceAnswers(created.body.key, status, 20_000, 'the key to reach marketplace-api');
    return { id: created.body.id as number, key: created.body.key as string };
  };

  it('accepts a new key once its event arrived, and refuses it soon after deletion', async () => {
    const created = await keyInMarketplace({ name: 'remote' });
    const { key } = created;
    const ok = await machinesWith(key);
    expect(ok.body).toEqual({ success: true, machines: [] });

    await request(identity.getHttpServer())
      .delete(`/api/v0/auth/apikeys/${created.id}/`)
      .set('Authorization', `Bearer ${ADMIN_KEY}`)
      .send({})
      .expect(200);
    await untilMarketplaceAnswers(key, 401, 10_000, 'the deletion to reach marketplace-api');
    const refused = await machinesWith(key);
    expect(refused.body).toEqual({ success: false, error: 'invalid_key', msg: 'Invalid user key' });
  });

  it('refuses the old value of a reset key and accepts the new one', async () => {
    const { key } = await keyInMarketplace({});
    const reset = await request(identity.getHttpServer())
      .put('/api/v0/commands/reset_apikey/')
      .set('Authorization', `Bearer ${key}`)
      .send({})
      .expect(200);
    await untilMarketplaceAnswers(key, 401, 10_000, 'the reset');
    expect((await machinesWith(reset.body.new_api_key)).status).toBe(200);
  });

  it('enforces scopes there too: a key without machine_read gets 403', async () => {
    await keyInMarketplace({ permissions: { api: { user_read: {} } } }, 403);
  });

  it("refuses a key at once when another process revokes it in marketplace's key table (its cache follows NOTIFY)", async () => {
    const created = await keyInMarketplace({ name: 'cached' });
    const { key } = created;
    // Found valid, so now cached in marketplace-api's process.
    expect((await machinesWith(key)).status).toBe(200);

    // A second marketplace-api replica (this process) applies the deletion to the shared key table; the
    // spawned process gets no event of it, only the NOTIFY its commit sends.
    const listener = new Client({ connectionString: url });
    await listener.connect();
    try {
      await listener.query(`LISTEN ${READ_MODEL_CHANNEL}`);
      const schema = CONTEXT_SCHEMAS.marketplace;
      const notified = new Promise<void>((resolve) =>
        listener.on('notification', (n) => {
          if (n.payload?.includes(`${schema}.auth_api_keys`)) resolve();
        }),
      );
      const deletion = {
        eventId: '00000000-0000-4000-8000-00000000a11d',
        type: 'ApiKeyDeleted',
        schemaVersion: 1,
        streamId: `api_key-${created.id}`,
        streamType: 'api_key',
        streamPosition: 2,
        globalPosition: '0',
        occurredAt: new Date().toISOString(),
        context: 'identity',
        data: { keyId: created.id, deletedAt: new Date().toISOString() },
        metadata: { correlationId: 'replica', causationId: 'replica' },
      } as EventEnvelope;
      await db.transaction((sql) => applyProjection(sql, schema, authKeysProjection(schema), deletion));
      await notified;
      // The NOTIFY reached this listener; the other process's arrives at about the same time.
      await untilMarketplaceAnswers(key, 401, 2_000, 'the NOTIFY to reach marketplace-api');
    } finally {
      await listener.end();
    }
  });
});
