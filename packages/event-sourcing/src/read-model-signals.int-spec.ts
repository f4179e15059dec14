import { createTestDatabase, eventually } from '@rigmarket/testing';
import { Client } from 'pg';
import { Database } from './database';
import { READ_MODEL_CHANNEL, readModelsChanged } from './read-model-signals';

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

  if (kind === 'postgres') {
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
