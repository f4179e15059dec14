import { ContextRuntime, Database, ManualClock } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { marketplaceContext } from '../marketplace.context';
import { chargeFor } from './ledger.decider';
import { ChargeUsageCommand, ChargeUsageHandler, LedgerEntriesHandler, LedgerEntriesQuery } from './ledger.handlers';

/** Charges through the runner and the ledger projection (embedded storage; no services needed). */
describe('billing ledger: charges, host earnings, exhaustion', () => {
  let db: Database;
  let transport: InProcessTransport;
  let runtime: ContextRuntime;
  const metadata = { correlationId: 'c', causationId: 'c' };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    transport = new InProcessTransport();
    runtime = await ContextRuntime.start(marketplaceContext, { db, transport, clock: new ManualClock('2026-05-01T12:00:00.000Z') });
  });
  afterAll(async () => {
    await runtime.stop();
    await transport.close();
    await db.close();
  });

  it('charges the renter, pays the host, and announces exhaustion when the balance runs out', async () => {
    await runtime.runner.handle('ledger-2', { initialState: () => ({}), evolve: (s) => s }, () => [
      { type: 'CreditGranted', data: { userId: 2, amount: 1, grantedBy: 1, note: null, at: '2026-05-01T12:00:00.000Z' } },
    ], metadata);
    const handler = new ChargeUsageHandler(runtime);
    const hour = chargeFor(0.75, new Date('2026-05-01T11:00:00Z'), new Date('2026-05-01T12:00:00Z'));
    for (const [start, end] of [['11:00', '12:00'], ['12:00', '13:00']]) {
      await handler.execute(new ChargeUsageCommand(2, 7, 9, 42, 'gpu', hour, `2026-05-01T${start}:00.000Z`, `2026-05-01T${end}:00.000Z`, metadata));
    }
    const entries = new LedgerEntriesHandler(runtime);
    const renter = await entries.execute(new LedgerEntriesQuery(2, ['credit', 'charge_gpu']));
    expect(renter.balance).toBe(-0.5);
    expect(renter.entries.filter((e) => e.type === 'charge_gpu')).toHaveLength(2);
    const host = await entries.execute(new LedgerEntriesQuery(7, ['earning']));
    expect(host.balance).toBe(1.5);
    const events = await db.transaction((sql) => runtime.store.readStream(sql, 'ledger-2'));
    expect(events.map((e) => e.type)).toEqual(['CreditGranted', 'AccountCharged', 'AccountCharged', 'CreditExhausted']);
  });
});
