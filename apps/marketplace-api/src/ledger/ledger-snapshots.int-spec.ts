import type { DomainEvent } from '@rigmarket/contracts';
import { ContextRuntime, Database, ManualClock } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { createTestDatabase } from '@rigmarket/testing';
import { marketplaceContext } from '../marketplace.context';
import { ledgerDecider, ledgerStreamId } from './ledger.decider';
import { runLedgerCommand } from './ledger.handlers';

/**
 * Billing cost must not grow with a ledger's history: a command folds the stream's snapshot plus at most
 * `ledgerSnapshot.every` events, however many came before (PostgreSQL).
 */
describe('ledger snapshots: a long history folds in bounded work', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let transport: InProcessTransport;
  let runtime: ContextRuntime;
  const metadata = { correlationId: 'c', causationId: 'c' };
  const AT = '2026-05-01T12:00:00.000Z';
  const HISTORY = 5000;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    transport = new InProcessTransport();
    runtime = await ContextRuntime.start(marketplaceContext, { db, transport, clock: new ManualClock(AT) });
  });
  afterAll(async () => {
    await runtime.stop();
    await transport.close();
    await db.close();
    await drop();
  });

  it('reads the snapshot and the events after it, not the 5,000 before; the state equals a full fold', async () => {
    const host = 7;
    const stream = ledgerStreamId(host);
    // A host that has earned 5,000 charges already (written straight to the store: no snapshot yet).
    const earned = (n: number): DomainEvent => ({
      type: 'HostEarned',
      data: {
        userId: host,
        machineId: 42,
        instanceId: n % 40,
        amountMicros: 10_000,
        at: AT,
        chargeId: `old-${n}`,
      },
    });
    for (let from = 0; from < HISTORY; from += 500) {
      await db.transaction((sql) =>
        runtime.store.append(
          sql,
          stream,
          from,
          Array.from({ length: 500 }, (_, i) => earned(from + i)),
          metadata,
          new Date(AT),
        ),
      );
    }
    // What runLedgerCommand runs, with the runner's result (events read) in view.
    const earn = (chargeId: string) =>
      runtime.runner.handle(
        stream,
        ledgerDecider,
        (state) =>
          ledgerDecider.decide(
            {
              type: 'RecordEarning',
              at: AT,
              userId: host,
              chargeId,
              instanceId: 1,
              machineId: 42,
              amountMicros: 10_000,
              alreadyEarned: false,
            },
            state,
          ),
        metadata,
      );
    // The first command after the history folds it all once and leaves a snapshot...
    const first = await earn('new-0');
    expect(first.eventsRead).toBe(HISTORY);
    // ...and every later one reads fewer than `every` events, through the handler billing uses.
    const reads: number[] = [];
    for (let n = 1; n <= 120; n += 1) {
      const result = await earn(`new-${n}`);
      reads.push(result.eventsRead);
    }
    expect(Math.max(...reads)).toBeLessThan(ledgerDecider.snapshot.every);
    // A redelivered charge (through the billing handler, which looks the charge up) earns nothing more.
    const balance = await runLedgerCommand(
      runtime,
      {
        type: 'RecordEarning',
        userId: host,
        chargeId: 'old-17',
        instanceId: 1,
        machineId: 42,
        amountMicros: 10_000,
      },
      metadata,
    );
    expect(balance).toBe(51_210_000); // micros: 5,121 earnings of $0.01
    // The snapshot-based state is the state of a full fold.
    const loaded = await runtime.runner.load(stream, ledgerDecider);
    expect(loaded.eventsRead).toBeLessThan(ledgerDecider.snapshot.every);
    const all = await db.transaction((sql) => runtime.store.readStream(sql, stream));
    expect(all).toHaveLength(HISTORY + 121);
    const full = all.reduce(
      (s, e) => ledgerDecider.evolve(s, { type: e.type, data: e.data } as never),
      ledgerDecider.initialState(),
    );
    expect(loaded.state).toEqual(full);
    expect(loaded.version).toBe(all.length);
  });
});
