import type { CreditExhausted, EventEnvelope } from '@rigmarket/contracts';
import { createTestDatabase, eventually } from '@rigmarket/testing';
import { Database } from './database';
import { deadLetterLogger } from './dead-letters';
import { runMigrations } from './migrations';
import { type Reactor, ReactorWorker, reactorQueueMigration } from './reactors';

const envelope = (eventId: string, type: string, userId: number): EventEnvelope => ({
  eventId,
  type,
  schemaVersion: 2,
  context: 'marketplace',
  streamType: 'ledger',
  streamId: `ledger-${userId}`,
  streamPosition: 1,
  globalPosition: '1',
  data: { userId, balanceMicros: 0, at: '2026-01-01T00:00:00.000Z' },
  metadata: { correlationId: 'c', causationId: 'c' },
  occurredAt: '2026-01-01T00:00:00.000Z',
});
const delivery = { topic: 't', partition: 0, offset: '0' };

describe('reactors on PostgreSQL', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let worker: ReactorWorker;
  const done: number[] = [];
  let failuresLeft = 0;
  const reactor: Reactor<CreditExhausted> = {
    name: 'stop_on_exhaustion',
    sources: [{ context: 'marketplace', streamType: 'ledger' }],
    eventTypes: ['CreditExhausted'],
    async react(e) {
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw new Error('host unreachable');
      }
      done.push(e.data.userId);
    },
  };

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, 'marketplace', [reactorQueueMigration]);
    worker = new ReactorWorker(db, 'marketplace', [reactor], { pollIntervalMs: 50 });
    worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await db.close();
    await drop();
  });

  it('runs the work once per event, after the delivery, even when the event is delivered twice', async () => {
    const [subscription] = worker.subscriptions('test');
    await subscription!.handle(envelope('e1', 'CreditExhausted', 7), delivery);
    await subscription!.handle(envelope('e1', 'CreditExhausted', 7), delivery);
    await subscription!.handle(envelope('e2', 'CreditGranted', 8), delivery);
    await eventually(async () => (done.includes(7) ? true : undefined), 10_000, 'the work ran');
    await new Promise((r) => setTimeout(r, 200));
    expect(done).toEqual([7]);
    const rows = await eventually(
      async () => {
        const found = await db.query<{ event_id: string; done: boolean }>(
          `SELECT event_id, done_at IS NOT NULL AS done FROM marketplace.reactor_queue`,
        );
        return found.every((row) => row.done) ? found : undefined;
      },
      10_000,
      'the queue items marked done',
    );
    expect(rows).toEqual([{ event_id: 'e1', done: true }]);
  });

  it('retries failed work with backoff until it succeeds, and keeps the last error meanwhile', async () => {
    const logged = jest.spyOn(deadLetterLogger, 'error').mockImplementation(() => undefined);
    failuresLeft = 2;
    const [subscription] = worker.subscriptions('test');
    await subscription!.handle(envelope('e3', 'CreditExhausted', 9), delivery);
    await eventually(
      async () => {
        const rows = await db.query<{ last_error: string | null }>(
          `SELECT last_error FROM marketplace.reactor_queue WHERE event_id = 'e3'`,
        );
        return rows[0]?.last_error?.includes('host unreachable') ? true : undefined;
      },
      10_000,
      'the failure recorded',
    );
    await eventually(async () => (done.includes(9) ? true : undefined), 15_000, 'the retried work ran');
    // The item is marked done just after the work returns: wait for that, then read it.
    const rows = await eventually(
      async () => {
        const found = await db.query<{ attempts: number; last_error: string | null; done: boolean }>(
          `SELECT attempts, last_error, done_at IS NOT NULL AS done FROM marketplace.reactor_queue WHERE event_id = 'e3'`,
        );
        return found[0]?.done ? found : undefined;
      },
      10_000,
      'the item marked done',
    );
    expect(rows).toEqual([{ attempts: 3, last_error: null, done: true }]);
    // each failure logged at error with the event id
    expect(
      logged.mock.calls.filter((c) => /failed on event e3 .*host unreachable/.test(String(c[0]))),
    ).toHaveLength(2);
    logged.mockRestore();
  });

  it('retries failed work when its delay ends, however far apart an idle worker polls', async () => {
    const logged = jest.spyOn(deadLetterLogger, 'error').mockImplementation(() => undefined);
    const ran: number[] = [];
    let fails = 1;
    const flaky: Reactor<CreditExhausted> = {
      name: 'flaky_once',
      sources: [{ context: 'marketplace', streamType: 'ledger' }],
      eventTypes: ['CreditExhausted'],
      async react(e) {
        if (fails > 0) {
          fails -= 1;
          throw new Error('host unreachable');
        }
        ran.push(e.data.userId);
      },
    };
    // Polls a minute apart (an idle embedded server backs off to tens of seconds): only the retry's own
    // due time brings the work back within the test's time.
    const slow = new ReactorWorker(db, 'marketplace', [flaky], { pollIntervalMs: 60_000 });
    slow.start();
    try {
      const [subscription] = slow.subscriptions('slow');
      await subscription!.handle(envelope('e9', 'CreditExhausted', 21), delivery);
      await eventually(async () => (ran.includes(21) ? true : undefined), 10_000, 'the retried work ran');
      expect(ran).toEqual([21]);
      expect(logged.mock.calls.filter((c) => /failed on event e9/.test(String(c[0])))).toHaveLength(1);
    } finally {
      await slow.stop();
      logged.mockRestore();
    }
  });

  it("takes back a killed life's claims at start when it is the only process (embedded)", async () => {
    const ran: number[] = [];
    const resumed: Reactor<CreditExhausted> = {
      name: 'resumed_after_kill',
      sources: [{ context: 'marketplace', streamType: 'ledger' }],
      eventTypes: ['CreditExhausted'],
      async react(e) {
        ran.push(e.data.userId);
      },
    };
    // Claimed for ten minutes by a process killed while it ran the item.
    await db.execute(
      `INSERT INTO marketplace.reactor_queue (reactor, event_id, envelope, claimed_until, attempts)
       VALUES ('resumed_after_kill', 'e20', $1::jsonb, now() + interval '10 minutes', 1)`,
      [JSON.stringify(envelope('e20', 'CreditExhausted', 31))],
    );
    const restarted = new ReactorWorker(db, 'marketplace', [resumed], {
      pollIntervalMs: 60_000,
      releaseClaimsAtStart: true,
    });
    restarted.start();
    try {
      await eventually(async () => (ran.includes(31) ? true : undefined), 10_000, 'the claimed work ran');
      expect(ran).toEqual([31]);
    } finally {
      await restarted.stop();
    }
  });

  it('hands a batch reactor its queued events together, and one by one when the batch fails', async () => {
    const batches: number[][] = [];
    const single: number[] = [];
    let poisoned = 0;
    const batching: Reactor<CreditExhausted> = {
      name: 'batched_stop_on_exhaustion',
      sources: [{ context: 'marketplace', streamType: 'ledger' }],
      eventTypes: ['CreditExhausted'],
      async react(e) {
        if (e.data.userId === poisoned) throw new Error('poisoned');
        single.push(e.data.userId);
      },
      async reactBatch(events) {
        if (events.some((e) => e.data.userId === poisoned)) throw new Error('a poisoned event in the batch');
        batches.push(events.map((e) => e.data.userId));
      },
    };
    const logged = jest.spyOn(deadLetterLogger, 'error').mockImplementation(() => undefined);
    const warned = jest.spyOn(deadLetterLogger, 'warn').mockImplementation(() => undefined);
    const batchWorker = new ReactorWorker(db, 'marketplace', [batching], { pollIntervalMs: 50 });
    const [subscription] = batchWorker.subscriptions('batch-test');
    const deliver = (from: number) =>
      subscription!.handleBatch!(
        [0, 1, 2].map((n) => ({
          envelope: envelope(`b${from + n}`, 'CreditExhausted', from + n),
          delivery,
        })),
      );
    const pending = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT count(*) AS n FROM marketplace.reactor_queue WHERE reactor = 'batched_stop_on_exhaustion' AND done_at IS NULL`,
          )
        )[0]!.n,
      );
    try {
      // Queued by one delivery of three events, then run as one batch.
      await deliver(100);
      expect(await pending()).toBe(3);
      batchWorker.start();
      await eventually(async () => ((await pending()) === 0 ? true : undefined), 10_000, 'the batch done');
      expect(batches.map((b) => [...b].sort())).toEqual([[100, 101, 102]]);
      expect(single).toEqual([]);
      // A batch with a poisoned event: the others run one by one, the poisoned one waits for its retry.
      poisoned = 201;
      await deliver(200);
      // Marked done just after each run returns: wait for both, then read the three.
      const rows = await eventually(
        async () => {
          const found = await db.query<{ event_id: string; done: boolean; last_error: string | null }>(
            `SELECT event_id, done_at IS NOT NULL AS done, last_error FROM marketplace.reactor_queue
              WHERE reactor = 'batched_stop_on_exhaustion' AND event_id LIKE 'b2%' ORDER BY event_id`,
          );
          return found.filter((r) => r.done).length === 2 && found[1]?.last_error ? found : undefined;
        },
        10_000,
        'the good events of the failed batch run alone',
      );
      expect([...single].sort()).toEqual([200, 202]);
      expect(rows).toEqual([
        { event_id: 'b200', done: true, last_error: null },
        { event_id: 'b201', done: false, last_error: expect.stringContaining('poisoned') },
        { event_id: 'b202', done: true, last_error: null },
      ]);
      expect(batches).toHaveLength(1);
    } finally {
      await batchWorker.stop();
      logged.mockRestore();
      warned.mockRestore();
    }
  });
});
