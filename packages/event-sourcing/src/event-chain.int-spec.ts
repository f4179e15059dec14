import { createHash } from 'node:crypto';
import type { DomainEvent, EventMetadata } from '@rigmarket/contracts';
import { createTestDatabase } from '@rigmarket/testing';
import { Database, type Sql } from './database';
import { GENESIS_HASH, eventChainMigration, verifyChain } from './event-chain';
import { EventStore } from './event-store';
import { databaseStatements } from './metrics';
import { eventStoreMigration, runMigrations } from './migrations';

const metadata: EventMetadata = { correlationId: 'c', causationId: 'c' };
const heartbeat = (n: number): DomainEvent => ({
  type: 'MachineHeartbeat',
  data: { machineId: n, at: '2026-05-01T12:00:00.000Z', reliability: 0.99 },
});

describe('the events hash chain on PostgreSQL', () => {
  let url: string;
  let drop: () => Promise<void>;
  let db: Database;
  let schemas = 0;

  /** A fresh context schema with `streams` streams of 3 events each, appended one command at a time. */
  async function storeWith(streams: number): Promise<string> {
    schemas += 1;
    const schema = `chain${schemas}`;
    await runMigrations(db, schema, [eventStoreMigration, eventChainMigration]);
    const store = new EventStore('marketplace', schema);
    for (let s = 1; s <= streams; s += 1)
      await db.transaction((sql) =>
        store.append(
          sql,
          `machine-${s}`,
          0,
          [heartbeat(s), heartbeat(s + 1), heartbeat(s + 2)],
          metadata,
          new Date(),
        ),
      );
    // The outbox is a delivery queue, not history: emptied so that the tests below may edit any event row.
    await db.execute(`DELETE FROM ${schema}.outbox`);
    return schema;
  }
  const positions = async (schema: string) =>
    (
      await db.query<{ gp: string }>(
        `SELECT global_position::text AS gp FROM ${schema}.events ORDER BY global_position`,
      )
    ).map((r) => r.gp);

  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase());
    db = await Database.connect({ kind: 'postgres', url });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('links each appended event to the one before it; the head row holds the last hash', async () => {
    const schema = await storeWith(4);
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toBeUndefined();
    expect(report.events).toBe(12);
    const [last] = await db.query<{ hash: string; gp: string }>(
      `SELECT hash, global_position::text AS gp FROM ${schema}.events ORDER BY global_position DESC LIMIT 1`,
    );
    expect(report.head).toBe(last!.hash);
    expect(report.recordedHead).toEqual({ hash: last!.hash, globalPosition: last!.gp });
  });

  it('an auditor recomputes the first hash from the row alone: sha256(genesis + "\\n" + JCS of the content)', async () => {
    const schema = await storeWith(1);
    const [row] = await db.query<{ event_id: string; occurred_at: string; hash: string }>(
      `SELECT event_id, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS occurred_at, hash
         FROM ${schema}.events ORDER BY global_position LIMIT 1`,
    );
    // RFC 8785 by hand: keys sorted, no spaces.
    const canonical =
      `{"data":{"at":"2026-05-01T12:00:00.000Z","machineId":1,"reliability":0.99},"eventId":"${row!.event_id}",` +
      `"metadata":{"causationId":"c","correlationId":"c"},"occurredAt":"${row!.occurred_at}","schemaVersion":1,` +
      `"streamId":"machine-1","streamPosition":1,"streamType":"machine","type":"MachineHeartbeat"}`;
    expect(row!.hash).toBe(createHash('sha256').update(`${GENESIS_HASH}\n${canonical}`).digest('hex'));
  });

  it('stays one chain under concurrent appends from several processes, some rolled back', async () => {
    const schema = await storeWith(0);
    // three connection pools, each with its store: three processes appending to one context at once (each
    // store's guess of the head goes stale whenever another one appended or a transaction rolled back)
    const processes = await Promise.all(
      [1, 2, 3].map(() => Database.connect({ kind: 'postgres', url, poolSize: 4 })),
    );
    const stores = processes.map(() => new EventStore('marketplace', schema));
    const rolledBack = (i: number) => i % 7 === 3;
    try {
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          processes[i % 3]!.transaction(async (sql) => {
            await stores[i % 3]!.append(
              sql,
              `machine-${i}`,
              0,
              Array.from({ length: 1 + (i % 3) }, (_, k) => heartbeat(k)),
              metadata,
              new Date(),
            );
            if (rolledBack(i)) throw new Error('rolled back');
          }).catch((error: unknown) => {
            if (!rolledBack(i)) throw error;
          }),
        ),
      );
      // and one more from each, one after the other
      for (const [n, store] of stores.entries())
        await processes[n]!.transaction((sql) =>
          store.append(sql, `machine-last-${n}`, 0, [heartbeat(n)], metadata, new Date()),
        );
    } finally {
      await Promise.all(processes.map((p) => p.close()));
    }
    const expected = Array.from({ length: 60 }, (_, i) => (rolledBack(i) ? 0 : 1 + (i % 3))).reduce(
      (a, b) => a + b,
      3,
    );
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toBeUndefined();
    expect(report.events).toBe(expected);
  }, 60_000);

  it('links to the head its last commit left in one statement, the check locking the row', async () => {
    const schema = await storeWith(1);
    const store = new EventStore('marketplace', schema);
    const statements = async () => (await databaseStatements.get()).values[0]?.value ?? 0;
    await db.transaction((sql) => store.append(sql, 'machine-9', 0, [heartbeat(1)], metadata, new Date()));
    const before = await statements();
    await db.transaction((sql) => store.append(sql, 'machine-9', 1, [heartbeat(2)], metadata, new Date()));
    // the append's INSERT alone: no SELECT ... FOR UPDATE of the head row before it
    expect((await statements()) - before).toBe(1);

    // Two transactions of this process at once: the second waits its turn on the head row and links to the
    // head the first one committed, whichever of them tried the kept head.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = db.transaction(async (sql) => {
      await store.append(sql, 'machine-9', 2, [heartbeat(3)], metadata, new Date());
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = db.transaction((sql) =>
      store.append(sql, 'machine-10', 0, [heartbeat(4)], metadata, new Date()),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await Promise.all([first, second]);
    await db.transaction((sql) => store.append(sql, 'machine-9', 3, [heartbeat(5)], metadata, new Date()));
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toBeUndefined();
    expect(report.events).toBe(3 + 5);
    expect(report.recordedHead?.hash).toBe(report.head);
  });

  it('an UPDATE of one row breaks the chain at that row, naming the expected and the stored hash', async () => {
    const schema = await storeWith(3);
    const gp = (await positions(schema))[4]!;
    const [stored] = await db.query<{ hash: string }>(
      `SELECT hash FROM ${schema}.events WHERE global_position = $1`,
      [gp],
    );
    await db.execute(
      `UPDATE ${schema}.events SET data = jsonb_set(data, '{reliability}', '1') WHERE global_position = $1`,
      [gp],
    );
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toMatchObject({
      globalPosition: gp,
      streamId: 'machine-2',
      streamPosition: 2,
      found: stored!.hash,
    });
    expect(report.broken!.expected).not.toBe(stored!.hash);
    expect(report.events).toBe(4);
  });

  it('a DELETE of one row breaks the chain at the row after it', async () => {
    const schema = await storeWith(3);
    const all = await positions(schema);
    await db.execute(`DELETE FROM ${schema}.events WHERE global_position = $1`, [all[3]]);
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toMatchObject({ globalPosition: all[4], streamId: 'machine-2', streamPosition: 2 });
  });

  it('a swap of two rows positions breaks it at the first of them', async () => {
    const schema = await storeWith(3);
    const all = await positions(schema);
    await db.transaction(async (sql) => {
      await sql.execute(`UPDATE ${schema}.events SET global_position = -1 WHERE global_position = $1`, [
        all[2],
      ]);
      await sql.execute(`UPDATE ${schema}.events SET global_position = $1 WHERE global_position = $2`, [
        all[2],
        all[6],
      ]);
      await sql.execute(`UPDATE ${schema}.events SET global_position = $1 WHERE global_position = -1`, [
        all[6],
      ]);
    });
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toMatchObject({ globalPosition: all[2], streamId: 'machine-3', streamPosition: 1 });
  });

  it('deleting the newest event leaves a linked chain, and the head row tells', async () => {
    const schema = await storeWith(2);
    const all = await positions(schema);
    await db.execute(`DELETE FROM ${schema}.events WHERE global_position = $1`, [all[5]]);
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.events).toBe(5);
    expect(report.broken).toMatchObject({ globalPosition: all[5], streamId: 'machine-2', streamPosition: 2 });
  });

  it('chains the events of a store from before the chain, in order, when migrated', async () => {
    const schema = 'chain_legacy';
    await runMigrations(db, schema, [eventStoreMigration]);
    // more than one page of the migration's walk; now() keeps microseconds, the chain hashes them
    await db.execute(
      `INSERT INTO ${schema}.events (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at)
       SELECT gen_random_uuid(), 'machine-' || n, 'machine', 1, 'MachineHeartbeat', 1,
              jsonb_build_object('machineId', n, 'reliability', 0.99), '{}', now()
         FROM generate_series(1, 2500) AS n`,
    );
    expect(await runMigrations(db, schema, [eventStoreMigration, eventChainMigration])).toEqual([
      'core-0005-event-chain',
    ]);
    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toBeUndefined();
    expect(report.events).toBe(2500);
    // and appends go on from there
    await db.transaction((sql) =>
      new EventStore('marketplace', schema).append(sql, 'machine-1', 1, [heartbeat(1)], metadata, new Date()),
    );
    expect((await db.transaction((sql) => verifyChain(sql, schema))).events).toBe(2501);
  }, 60_000);
});

describe('the events hash chain on PGlite (embedded: the committed head kept by the process)', () => {
  let db: Database;
  const schema = 'chain_embedded';
  const store = new EventStore('marketplace', schema);
  const statements = async () => (await databaseStatements.get()).values[0]?.value ?? 0;
  const append = (sql: Sql, streamId: string, version: number) =>
    store.append(sql, streamId, version, [heartbeat(version + 1)], metadata, new Date());

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, schema, [eventStoreMigration, eventChainMigration]);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  it('links to the head its last commit left in one statement; after a rollback, or a head another writer moved, it reads the row', async () => {
    await db.transaction((sql) => append(sql, 'machine-1', 0));
    const before = await statements();
    await db.transaction((sql) => append(sql, 'machine-1', 1));
    // the append's INSERT alone: no read of the head row
    expect((await statements()) - before).toBe(1);

    await expect(
      db.transaction(async (sql) => {
        await append(sql, 'machine-1', 2);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.transaction((sql) => append(sql, 'machine-1', 2));

    // Another writer of the same database (a statement runner the process does not know as its own, as an
    // import's) moves the head: the next append finds the row changed, writes nothing, and links again.
    await db.transaction((sql) =>
      append({ query: (q, p) => sql.query(q, p), execute: (q, p) => sql.execute(q, p) }, 'machine-2', 0),
    );
    await db.transaction((sql) => append(sql, 'machine-1', 3));
    await db.transaction((sql) => append(sql, 'machine-2', 1));

    const report = await db.transaction((sql) => verifyChain(sql, schema));
    expect(report.broken).toBeUndefined();
    expect(report.events).toBe(6);
    expect(report.recordedHead?.hash).toBe(report.head);
    const streams = await db.query<{ stream_id: string; n: string }>(
      `SELECT stream_id, count(*)::text AS n FROM ${schema}.events GROUP BY stream_id ORDER BY stream_id`,
    );
    expect(streams).toEqual([
      { stream_id: 'machine-1', n: '4' },
      { stream_id: 'machine-2', n: '2' },
    ]);
  });
});
