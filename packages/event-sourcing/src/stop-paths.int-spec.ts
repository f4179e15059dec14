import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { CreditExhausted, DomainEvent, EventEnvelope } from '@rigmarket/contracts';
import { type StatementWatch, eventually, watchStatements } from '@rigmarket/testing';
import { Database } from './database';
import { deadLetterLogger } from './dead-letters';
import { EventStore } from './event-store';
import { eventChainMigration } from './event-chain';
import { eventStoreMigration, runMigrations } from './migrations';
import { OutboxRelay } from './outbox-relay';
import { type Reactor, ReactorWorker, reactorQueueMigration } from './reactors';
import type { Transport } from './transport';

/**
 * What the background loops of a context do when they are stopped: an app closes its database right after its
 * loops' stop() resolved, so a statement of theirs that runs later fails (or, before the pool refused, opened the
 * embedded database again after the test's environment was gone and crashed the jest run).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets promise callbacks run (not timers or I/O) until the loop asked for its first statement. */
async function firstStatementAsked(statements: StatementWatch): Promise<void> {
  for (let turn = 0; turn < 100 && statements.began === 0; turn += 1) await Promise.resolve();
}

/**
 * Given a loop whose first poll is reading (one statement in flight), when it is stopped: stop() resolves only
 * after that read, and the loop asks for no statement afterwards, `afterStop` (run right after stop()) included.
 */
async function stopMidPoll(
  loop: { start(): void; stop(): Promise<void> },
  statements: StatementWatch,
  afterStop: () => Promise<void> = async () => undefined,
): Promise<void> {
  loop.start();
  await firstStatementAsked(statements);
  expect(statements.inFlight).toBe(1);
  await loop.stop();
  expect(statements.inFlight).toBe(0);
  const began = statements.began;
  await afterStop();
  await sleep(300);
  expect(statements.began).toBe(began);
}

const exhausted = (eventId: string): EventEnvelope => ({
  eventId,
  type: 'CreditExhausted',
  schemaVersion: 2,
  context: 'marketplace',
  streamType: 'ledger',
  streamId: 'ledger-7',
  streamPosition: 1,
  globalPosition: '1',
  data: { userId: 7, balanceMicros: 0, at: '2026-01-01T00:00:00.000Z' },
  metadata: { correlationId: 'c', causationId: 'c' },
  occurredAt: '2026-01-01T00:00:00.000Z',
});

describe('stopping background loops (PGlite)', () => {
  let db: Database;

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, 'marketplace', [reactorQueueMigration]);
    await runMigrations(db, 'identity', [eventStoreMigration, eventChainMigration]);
  });
  const watches: StatementWatch[] = [];
  const watch = (): StatementWatch => {
    const statements = watchStatements(db);
    watches.push(statements);
    return statements;
  };
  afterEach(() => {
    jest.restoreAllMocks();
    for (const statements of watches.splice(0)) statements.restore();
  });
  afterAll(() => db.close());

  it('a reactor worker stopped while its poll reads the queue resolves only after that read, and queries no more', async () => {
    const reactor: Reactor<CreditExhausted> = {
      name: 'stop_on_exhaustion',
      sources: [{ context: 'marketplace', streamType: 'ledger' }],
      eventTypes: ['CreditExhausted'],
      react: async () => undefined,
    };
    const worker = new ReactorWorker(db, 'marketplace', [reactor], { pollIntervalMs: 60_000 });
    await stopMidPoll(worker, watch());
  });

  it('a reactor worker stopped while a failed item waits for its retry runs no statement afterwards', async () => {
    jest.spyOn(deadLetterLogger, 'error').mockImplementation(() => undefined);
    let attempts = 0;
    const reactor: Reactor<CreditExhausted> = {
      name: 'stop_on_exhaustion',
      sources: [{ context: 'marketplace', streamType: 'ledger' }],
      eventTypes: ['CreditExhausted'],
      react: async () => {
        attempts += 1;
        throw new Error('host unreachable');
      },
    };
    const worker = new ReactorWorker(db, 'marketplace', [reactor], { pollIntervalMs: 60_000 });
    worker.start();
    await worker.subscriptions('test')[0]!.handle(exhausted('e1'), { topic: 't', partition: 0, offset: '0' });
    // The first attempt failed and was recorded: its retry is due in 500 ms (250 ms * 2^attempts).
    await eventually(
      async () => {
        const [row] = await db.query<{ last_error: string | null }>(
          `SELECT last_error FROM marketplace.reactor_queue WHERE event_id = 'e1'`,
        );
        return row?.last_error ? true : undefined;
      },
      10_000,
      'the failed attempt recorded',
    );
    const statements = watch();
    await worker.stop();
    expect(statements.inFlight).toBe(0);
    await sleep(1_000);
    expect(statements.began).toBe(0);
    expect(attempts).toBe(1);
  });

  it('an outbox relay stopped while its poll looks at the outbox publishes and queries nothing afterwards, and a flush after stop does nothing', async () => {
    const store = new EventStore('identity', 'identity');
    const keyCreated: DomainEvent = {
      type: 'ApiKeyCreated',
      data: {
        keyId: 1,
        userId: 1,
        name: null,
        keyHash: 'h1',
        permissions: null,
        kind: 'api',
        createdAt: '2026-01-01T00:00:00Z',
      },
    };
    await db.transaction((sql) =>
      store.append(sql, 'api_key-1', 0, [keyCreated], { correlationId: 'c', causationId: 'c' }, new Date()),
    );
    let published = 0;
    const transport: Transport = {
      kind: 'in-process',
      publish: async (messages) => void (published += messages.length),
      subscribe: async () => undefined,
      close: async () => undefined,
    };
    const relay = new OutboxRelay(db, 'identity', transport, { pollIntervalMs: 60_000 });
    await stopMidPoll(relay, watch(), async () => {
      expect(await relay.flush()).toBe(0);
    });
    const [row] = await db.query<{ waiting: string }>(
      `SELECT count(*)::text AS waiting FROM identity.outbox WHERE published_at IS NULL`,
    );
    // Published or not, what it did was done when stop() resolved: the row and the transport agree.
    expect(Number(row!.waiting) + published).toBe(1);
  });
});

describe('the embedded pool after close', () => {
  it("a statement after db.close(), or one still waiting for the connection when it closed, rejects with 'the embedded database is closed', is reported on stderr and does not open the folder again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-closed-'));
    try {
      const db = await Database.connect({ kind: 'pglite', dataDir });
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      let began!: () => void;
      const holding = new Promise<void>((resolve) => (began = resolve));
      // A transaction holds the one connection; a query waits for it; the database closes meanwhile.
      const holder = db.transaction(async (sql) => {
        await sql.query(`SELECT 1`);
        began();
        await finished;
      });
      await holding;
      const waiting = db.query(`SELECT 2 AS two`);
      const create = jest.spyOn(PGlite, 'create');
      const warned: string[] = [];
      jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        warned.push(String(chunk));
        return true;
      });
      const closed = db.close();
      finish();
      await holder.catch(() => undefined);
      await closed;
      await expect(waiting).rejects.toThrow('the embedded database is closed');
      await expect(db.query(`SELECT 1 AS one`)).rejects.toThrow('the embedded database is closed');
      await expect(db.transaction((sql) => sql.execute(`SELECT 1`))).rejects.toThrow(
        'the embedded database is closed',
      );
      expect(create).not.toHaveBeenCalled();
      // Under test each one also says so on stderr: the one served after close, the two asked after it.
      expect(warned.filter((line) => line.includes('a statement reached a closed database'))).toHaveLength(3);
    } finally {
      jest.restoreAllMocks();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
