import { ApiError, type DomainEvent, type EventEnvelope, type EventMetadata } from '@rigmarket/contracts';
import { createTestDatabase, eventually } from '@rigmarket/testing';
import { ManualClock } from './clock';
import { CommandRunner } from './command-runner';
import { Database } from './database';
import { EventStore, WrongExpectedVersion } from './event-store';
import { eventChainMigration } from './event-chain';
import { eventStoreMigration, runMigrations } from './migrations';
import { OutboxRelay } from './outbox-relay';
import { databaseStatements } from './metrics';
import { type Projection, applyProjection } from './projections';
import type { OutgoingMessage, Transport } from './transport';

const metadata: EventMetadata = { correlationId: 'c', causationId: 'c' };
const keyCreated = (keyId: number): DomainEvent => ({
  type: 'ApiKeyCreated',
  data: {
    keyId,
    userId: 1,
    name: null,
    keyHash: `h${keyId}`,
    permissions: null,
    kind: 'api',
    createdAt: '2026-01-01T00:00:00Z',
  },
});

class RecordingTransport implements Transport {
  readonly kind = 'in-process' as const;
  readonly published: OutgoingMessage[] = [];
  async publish(messages: readonly OutgoingMessage[]) {
    this.published.push(...messages);
  }
  async subscribe() {}
  async close() {}
}

describe('event store on PostgreSQL', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const store = new EventStore('identity', 'identity');

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, 'identity', [
      eventStoreMigration,
      eventChainMigration,
      {
        id: '0002-counter',
        up: (sql, s) =>
          sql
            .execute(`CREATE TABLE ${s}.counter (stream_id TEXT PRIMARY KEY, n INTEGER NOT NULL)`)
            .then(() => undefined),
      },
    ]);
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('reads all events in numeric global order, also past 9 -> 10 (rebuilds replay in order)', async () => {
    for (let i = 1; i <= 12; i += 1)
      await db.transaction((sql) =>
        store.append(sql, `api_key-order${i}`, 0, [keyCreated(100 + i)], metadata, new Date()),
      );
    // readAll returns settled events only: older than every transaction in flight on the server, where other
    // suites' databases may hold one open for a moment.
    const all = await eventually(
      async () => {
        const read = await db.transaction((sql) => store.readAll(sql, '0', 1000, ['api_key']));
        return read.length >= 12 ? read : undefined;
      },
      30_000,
      'the 12 events settled',
    );
    const positions = all.map((e) => BigInt(e.globalPosition));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(positions.length).toBeGreaterThanOrEqual(12);
  });

  it('lets exactly one of two concurrent appends at the same expected version win', async () => {
    const results = await Promise.allSettled(
      [1, 2].map((i) =>
        db.transaction(async (sql) => {
          await store.readStream(sql, 'api_key-race');
          await new Promise((r) => setTimeout(r, 50)); // both have read version 0
          return store.append(sql, 'api_key-race', 0, [keyCreated(i)], metadata, new Date());
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(WrongExpectedVersion);
    const stream = await db.transaction((sql) => store.readStream(sql, 'api_key-race'));
    expect(stream.map((e) => e.streamPosition)).toEqual([1]);
  });

  it('runs 20 concurrent commands that may succeed once: one event, 19 clear refusals', async () => {
    type Claimed = DomainEvent<'ApiKeyCreated', unknown>;
    const evolver = {
      initialState: () => ({ claimed: false }),
      evolve: (_s: { claimed: boolean }, _e: Claimed) => ({ claimed: true }),
    };
    const runner = new CommandRunner(db, store, [], new ManualClock());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        runner.handle(
          'api_key-claim',
          evolver,
          (state) => {
            if (state.claimed) throw ApiError.conflict('Already claimed', 'already_claimed');
            return [keyCreated(100 + i) as Claimed];
          },
          metadata,
          { maxAttempts: 25 },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((x) => x.status === 'rejected') as PromiseRejectedResult[]) {
      expect((r.reason as ApiError).code).toBe('already_claimed');
    }
    const stream = await db.transaction((sql) => store.readStream(sql, 'api_key-claim'));
    expect(stream).toHaveLength(1);
  });

  it('applies an event delivered twice to a projection once', async () => {
    const counter: Projection = {
      name: 'counter',
      version: 1,
      sources: [{ context: 'identity', streamType: 'api_key' }],
      tables: ['identity.counter'],
      eventTypes: ['ApiKeyCreated'],
      apply: (sql, e) =>
        sql
          .execute(
            `INSERT INTO identity.counter VALUES ($1, 1) ON CONFLICT (stream_id) DO UPDATE SET n = counter.n + 1`,
            [e.streamId],
          )
          .then(() => undefined),
    };
    const [envelope] = await db.transaction((sql) =>
      store.append(sql, 'api_key-twice', 0, [keyCreated(7)], metadata, new Date()),
    );
    const outcomes = [];
    for (let i = 0; i < 2; i += 1) {
      outcomes.push(
        await db.transaction((sql) => applyProjection(sql, 'identity', counter, envelope as EventEnvelope)),
      );
    }
    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await db.query(`SELECT n FROM identity.counter WHERE stream_id = 'api_key-twice'`)).toEqual([
      { n: 1 },
    ]);
  });

  it('publishes a stream in order when the outbox ids cross 99 -> 100 (a text sort sent 100 before 99)', async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    await db.query(`SELECT setval('identity.outbox_id_seq', 95)`);
    for (let i = 0; i < 12; i += 1)
      await db.transaction((sql) =>
        store.append(sql, 'api_key-relay-order', i, [keyCreated(200 + i)], metadata, new Date()),
      );
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport);
    let published = 0;
    await eventually(
      async () => {
        published += await relay.flush();
        return published >= 12 ? true : undefined;
      },
      30_000,
      'the 12 events published',
    );
    await relay.stop();
    expect(transport.published.map((m) => m.envelope.streamPosition)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });

  it('never publishes past an append that commits late: a second append waits for it before drawing its id', async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport);
    let releaseSlow!: () => void;
    const slowCanCommit = new Promise<void>((r) => (releaseSlow = r));
    let slowAppended!: () => void;
    const slowHasAppended = new Promise<void>((r) => (slowAppended = r));
    // A: appends first (the lower outbox id) and commits last.
    const slow = db.transaction(async (sql) => {
      await store.append(sql, 'api_key-late', 0, [keyCreated(8)], metadata, new Date());
      slowAppended();
      await slowCanCommit;
    });
    await slowHasAppended;
    // B: appends while A is open. The relay publishes every committed row, so B must not commit its row
    // before A: it waits for A's chain head (a lock wait in PostgreSQL) before it draws an outbox id.
    let earlyCommitted = false;
    const early = db
      .transaction((sql) => store.append(sql, 'api_key-early', 0, [keyCreated(9)], metadata, new Date()))
      .then(() => (earlyCommitted = true));
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).length > 0
          ? true
          : undefined,
      30_000,
      'the second append waiting for the first',
    );
    expect(await relay.flush()).toBe(0);
    expect(earlyCommitted).toBe(false);
    releaseSlow();
    await Promise.all([slow, early]);
    expect(await relay.flush()).toBe(2);
    expect(transport.published.map((m) => m.key)).toEqual(['api_key-late', 'api_key-early']);
    expect(await relay.flush()).toBe(0);
    await relay.stop();
  });

  it('publishes concurrent appends (in transactions that commit late, and autocommit) in outbox id order', async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport);
    let appending = true;
    // The relay flushes all along, so it sees every moment of the race.
    const relaying = (async () => {
      while (appending) await relay.flush();
    })();
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, Math.random() * 20));
        const streamId = `api_key-concurrent${i}`;
        if (i % 3 === 0) return store.append(db, streamId, 0, [keyCreated(300 + i)], metadata, new Date());
        return db.transaction(async (sql) => {
          const appended = await store.append(sql, streamId, 0, [keyCreated(300 + i)], metadata, new Date());
          await new Promise((r) => setTimeout(r, Math.random() * 20));
          return appended;
        });
      }),
    );
    appending = false;
    await relaying;
    await relay.flush();
    await relay.stop();
    const positions = transport.published.map((m) => BigInt(m.envelope.globalPosition));
    expect(positions).toHaveLength(30);
    expect(positions.every((p, i) => i === 0 || p > positions[i - 1]!)).toBe(true);
  });

  it('a flush takes the lease and reads a batch in one statement, and stops after a short batch', async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    for (let i = 0; i < 12; i += 1)
      await db.transaction((sql) =>
        store.append(sql, 'api_key-relay-batches', i, [keyCreated(300 + i)], metadata, new Date()),
      );
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport, { batchSize: 5 });
    const statements = async () => (await databaseStatements.get()).values[0]?.value ?? 0;
    const before = await statements();
    expect(await relay.flush()).toBe(12);
    // Batches of 5, 5 and 2: each one statement to lease and read, one to mark it published; none after the 2.
    expect((await statements()) - before).toBe(6);
    expect(transport.published.map((m) => m.envelope.streamPosition)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    expect(await relay.flush()).toBe(0);
    await relay.stop();
  });

  it('publishes a committed row at once while an unrelated transaction is still in flight', async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport);
    let releaseSlow!: () => void;
    const slowCanCommit = new Promise<void>((r) => (releaseSlow = r));
    let slowStarted!: () => void;
    const slowHasStarted = new Promise<void>((r) => (slowStarted = r));
    // Older than the append and still open (with a transaction id): a cluster-wide xmin would hold the row.
    const slow = db.transaction(async (sql) => {
      await sql.query(`SELECT pg_current_xact_id()`);
      slowStarted();
      await slowCanCommit;
    });
    await slowHasStarted;
    await db.transaction((sql) =>
      store.append(sql, 'api_key-not-held', 0, [keyCreated(11)], metadata, new Date()),
    );
    expect(await relay.flush()).toBe(1);
    releaseSlow();
    await slow;
    await relay.stop();
    expect(transport.published.map((m) => m.key)).toEqual(['api_key-not-held']);
  });

  // A process killed with kill -9 leaves its lease behind; its next life (or another replica) has a new holder.
  const leaveDeadLease = (ms: number) =>
    db.execute(
      `UPDATE identity.outbox_relay_lease SET holder = 'killed-process', lease_until = now() + ($1 || ' milliseconds')::interval WHERE id = 1`,
      [String(ms)],
    );

  it("a relay refused the lease looks again when the holder's lease ends, not only at its next poll", async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    const transport = new RecordingTransport();
    // The poll comes once a minute: the row must go out soon after the dead lease ends.
    const relay = new OutboxRelay(db, 'identity', transport, { pollIntervalMs: 60_000 });
    relay.start();
    await db.transaction((sql) =>
      store.append(sql, 'api_key-after-lease', 0, [keyCreated(12)], metadata, new Date()),
    );
    // Left just before the flush, so that it still runs then on a loaded machine.
    await leaveDeadLease(2_000);
    expect(await relay.flush()).toBe(0);
    await eventually(
      async () => (transport.published.some((m) => m.key === 'api_key-after-lease') ? true : undefined),
      30_000,
      'the row published once the lease ended',
    );
    await relay.stop();
  });

  it("a relay told it is the only process (embedded) takes a killed life's lease at start", async () => {
    await db.execute(`UPDATE identity.outbox SET published_at = now()`);
    await db.transaction((sql) =>
      store.append(sql, 'api_key-left-behind', 0, [keyCreated(13)], metadata, new Date()),
    );
    await leaveDeadLease(600_000);
    const transport = new RecordingTransport();
    const relay = new OutboxRelay(db, 'identity', transport, {
      pollIntervalMs: 60_000,
      takeLeaseAtStart: true,
    });
    relay.start();
    // Without taking the lease, the row would wait ten minutes for the killed process's lease.
    await eventually(
      async () => (transport.published.some((m) => m.key === 'api_key-left-behind') ? true : undefined),
      30_000,
      'the row left by the killed life published',
    );
    await relay.stop();
  });
});
