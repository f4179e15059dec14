import type { ApiKeyEvent } from '@rigmarket/contracts';
import { createTestDatabase, eventually } from '@rigmarket/testing';
import { Client } from 'pg';
import { Database } from './database';
import { deadLettersMigration } from './dead-letters';
import { eventChainMigration } from './event-chain';
import { EventStore } from './event-store';
import { eventStoreMigration, runMigrations } from './migrations';
import {
  applyInlineProjections,
  defineProjection,
  projectionSubscription,
  rebuildInChunks,
  replayProjection,
} from './projections';
import { READ_MODEL_CHANNEL, readModelsChanged } from './read-model-signals';
import { apiKeyCreated } from './testing/api-keys';

const AT = '2026-05-01T12:00:00.000Z';
/** A read model of API keys in `sync_maintenance.sig_keys`. */
const keysProjection = defineProjection<ApiKeyEvent>({
  name: 'sig_keys',
  version: 1,
  sources: [{ context: 'identity', streamType: 'api_key' }],
  tables: ['sync_maintenance.sig_keys'],
  eventTypes: ['ApiKeyCreated'],
  async apply(sql, event) {
    if (event.type === 'ApiKeyCreated')
      await sql.execute(`INSERT INTO sync_maintenance.sig_keys (key_id) VALUES ($1)`, [event.data.keyId]);
  },
});

/**
 * Read-model change signals (read-model-signals.ts): a watch's version moves when a transaction that
 * changed one of its tables commits (not before, not on rollback), on PGlite and on PostgreSQL; on
 * PostgreSQL another process's change arrives by NOTIFY, and the watch is not live while its LISTEN
 * connection is down.
 */
describe.each(['pglite', 'postgres'] as const)('read-model change signals (%s)', (kind) => {
  let db: Database;
  let drop: (() => Promise<void>) | undefined;
  let url = '';

  beforeAll(async () => {
    if (kind === 'pglite') {
      db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    } else {
      const database = await createTestDatabase();
      drop = database.drop;
      url = database.url;
      db = await Database.connect({ kind: 'postgres', url });
    }
    await db.execute(`CREATE SCHEMA sig`);
    await db.execute(`CREATE TABLE sig.a (n INT)`);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('moves a version when the transaction that changed its table commits, not before and not on rollback', async () => {
    const watch = db.watchReadModels(['sig.a']);
    const other = db.watchReadModels(['sig.b']);
    await db.readModelSignalsReady();
    const before = watch.version();
    const otherBefore = other.version();
    expect(before).not.toBeNull();
    let during: number | null = null;
    await db.transaction(async (sql) => {
      await sql.execute(`INSERT INTO sig.a VALUES (1)`);
      readModelsChanged(sql, ['sig.a']);
      during = watch.version();
    });
    expect(during).toBe(before);
    const after = watch.version();
    expect(after).not.toBe(before);
    expect(other.version()).toBe(otherBefore);

    await expect(
      db.transaction(async (sql) => {
        await sql.execute(`INSERT INTO sig.a VALUES (2)`);
        readModelsChanged(sql, ['sig.a']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(watch.version()).toBe(after);
  });

  it('moves when an inline apply, a delivery, a replay or a rebuild changes a read model', async () => {
    await runMigrations(db, 'identity', [eventStoreMigration, eventChainMigration]);
    await runMigrations(db, 'sync_maintenance', [
      eventStoreMigration,
      deadLettersMigration,
      {
        id: '0001-sig-keys',
        up: (sql, s) =>
          sql.execute(`CREATE TABLE ${s}.sig_keys (key_id INTEGER PRIMARY KEY)`).then(() => undefined),
      },
    ]);
    const watch = db.watchReadModels(['sync_maintenance.sig_keys']);
    await db.readModelSignalsReady();
    const store = new EventStore('identity', 'identity');
    const moves = async (work: () => Promise<unknown>) => {
      const before = watch.version();
      await work();
      return watch.version() !== before;
    };
    const metadata = { correlationId: 'c', causationId: 'c' };
    // Inline: applied in the transaction that appends.
    expect(
      await moves(() =>
        db.transaction(async (sql) => {
          const events = await store.append(sql, 'api_key-1', 0, [apiKeyCreated(1)], metadata, new Date(AT));
          await applyInlineProjections(sql, 'sync_maintenance', [keysProjection], events);
        }),
      ),
    ).toBe(true);
    // Delivered: a subscription's apply transaction.
    const [second] = await db.transaction((sql) =>
      store.append(sql, 'api_key-2', 0, [apiKeyCreated(2)], metadata, new Date(AT)),
    );
    const subscription = projectionSubscription(db, 'sync_maintenance', keysProjection, 'sig');
    expect(
      await moves(() =>
        subscription.handle(second!, { topic: 'identity.api_key', partition: 0, offset: '0' }),
      ),
    ).toBe(true);
    // A redelivery changes nothing and tells nothing.
    expect(
      await moves(() =>
        subscription.handle(second!, { topic: 'identity.api_key', partition: 0, offset: '0' }),
      ),
    ).toBe(false);
    expect(
      await moves(() => db.transaction((sql) => replayProjection(sql, 'sync_maintenance', keysProjection))),
    ).toBe(true);
    expect(await moves(() => rebuildInChunks(db, 'sync_maintenance', keysProjection, 1))).toBe(true);
    expect(await db.query(`SELECT key_id FROM sync_maintenance.sig_keys ORDER BY key_id`)).toEqual([
      { key_id: 1 },
      { key_id: 2 },
    ]);
  });

  if (kind === 'postgres') {
    it('tells other processes with the COMMIT, and not when the COMMIT fails', async () => {
      await db.execute(`CREATE TABLE sig.once (n INT UNIQUE DEFERRABLE INITIALLY DEFERRED)`);
      const listener = new Client({ connectionString: url });
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query(`LISTEN ${READ_MODEL_CHANNEL}`);
      try {
        // A table name with a quote: the payload travels inside the COMMIT's query text.
        await db.transaction(async (sql) => {
          await sql.execute(`INSERT INTO sig.once VALUES (1)`);
          readModelsChanged(sql, ["sig.it's", 'sig.once']);
        });
        await eventually(async () => (heard.length > 0 ? true : undefined), 5_000, 'the NOTIFY');
        expect(heard[0]!.split(' ')[1]!.split(',').sort()).toEqual(["sig.it's", 'sig.once']);

        // The unique check is deferred to the COMMIT, which fails: nothing stored, nobody told.
        await expect(
          db.transaction(async (sql) => {
            await sql.execute(`INSERT INTO sig.once VALUES (1)`);
            readModelsChanged(sql, ['sig.once']);
          }),
        ).rejects.toThrow(/duplicate key/);
        await db.transaction(async (sql) => {
          await sql.execute(`INSERT INTO sig.once VALUES (2)`);
          readModelsChanged(sql, ['sig.once']);
        });
        await eventually(async () => (heard.length > 1 ? true : undefined), 5_000, 'the second NOTIFY');
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(heard).toHaveLength(2);
        expect(await db.query(`SELECT n FROM sig.once ORDER BY n`)).toEqual([{ n: 1 }, { n: 2 }]);
      } finally {
        await listener.end();
      }
    });

    it("moves on another process's NOTIFY, and is not live while the LISTEN connection is down", async () => {
      const watch = db.watchReadModels(['sig.a']);
      await db.readModelSignalsReady();
      const before = watch.version();
      // Another process: its own token; the NOTIFY is delivered when its transaction commits.
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SELECT pg_notify($1, $2)`, [READ_MODEL_CHANNEL, 'another-process sig.a']);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(watch.version()).toBe(before);
        await client.query('COMMIT');
        const moved = await eventually(
          async () => (watch.version() !== before ? watch.version() : undefined),
          5_000,
          'the NOTIFY to arrive',
        );

        await client.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'rigmarket-read-model-listener' AND datname = current_database()`,
        );
        await eventually(async () => (watch.version() === null ? true : undefined), 5_000, 'the loss');
        // It reconnects by itself, and every version moved (notifications meanwhile were lost).
        await db.readModelSignalsReady();
        const back = watch.version();
        expect(back).not.toBeNull();
        expect(back).not.toBe(moved);
      } finally {
        await client.end();
      }
    });
  }
});
