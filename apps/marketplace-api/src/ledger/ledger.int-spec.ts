import type { AccountCharged, EventEnvelope } from '@rigmarket/contracts';
import {
  ContextRuntime,
  Database,
  type EnvelopeOf,
  ManualClock,
  ReactorWorker,
} from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually } from '@rigmarket/testing';
import { marketplaceContext } from '../marketplace.context';
import { HostEarningsReactor } from './host-earnings.reactor';
import { chargeFor } from './ledger.decider';
import {
  ChargeUsageCommand,
  ChargeUsageHandler,
  LedgerEntriesHandler,
  LedgerEntriesQuery,
} from './ledger.handlers';

/** Charges through the runner, the ledger projection and the host-earnings reactor (embedded storage; no services needed). */
describe('billing ledger: charges, host earnings, exhaustion', () => {
  let db: Database;
  let transport: InProcessTransport;
  let runtime: ContextRuntime;
  let worker: ReactorWorker;
  const metadata = { correlationId: 'c', causationId: 'c' };
  const hour = chargeFor(750_000, new Date('2026-05-01T11:00:00Z'), new Date('2026-05-01T12:00:00Z'));
  const charge = (renter: number, host: number, instance: number, start: string, end: string) =>
    new ChargeUsageHandler(runtime).execute(
      new ChargeUsageCommand(
        renter,
        host,
        instance,
        42,
        'gpu',
        hour,
        `2026-05-01T${start}:00.000Z`,
        `2026-05-01T${end}:00.000Z`,
        metadata,
      ),
    );
  const entries = (userId: number, kinds: string[]) =>
    new LedgerEntriesHandler(runtime).execute(new LedgerEntriesQuery(userId, kinds));
  const stream = (id: string) => db.transaction((sql) => runtime.store.readStream(sql, id));

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    transport = new InProcessTransport();
    runtime = await ContextRuntime.start(marketplaceContext, {
      db,
      transport,
      clock: new ManualClock('2026-05-01T12:00:00.000Z'),
      reactors: { pollIntervalMs: 50 },
    });
    worker = await runtime.addReactors([new HostEarningsReactor(runtime)]);
  });
  afterAll(async () => {
    await runtime.stop();
    await transport.close();
    await db.close();
  });

  it('charges the renter, pays the host, and announces exhaustion when the balance runs out', async () => {
    await runtime.runner.handle(
      'ledger-2',
      { initialState: () => ({}), evolve: (s) => s },
      () => [
        {
          type: 'CreditGranted',
          data: {
            userId: 2,
            amountMicros: 1_000_000,
            grantedBy: 1,
            note: null,
            at: '2026-05-01T12:00:00.000Z',
          },
        },
      ],
      metadata,
    );
    for (const [start, end] of [
      ['11:00', '12:00'],
      ['12:00', '13:00'],
    ])
      await charge(2, 7, 9, start!, end!);
    const renter = await entries(2, ['credit', 'charge_gpu']);
    expect(renter.balance).toBe(-0.5);
    expect(renter.entries.filter((e) => e.type === 'charge_gpu')).toHaveLength(2);
    // The host's earnings follow from the recorded charges.
    const host = await eventually(
      async () => {
        const found = await entries(7, ['earning']);
        return found.entries.length === 2 ? found : undefined;
      },
      10_000,
      'the host earned both charges',
    );
    expect(host.balance).toBe(1.5);
    expect((await stream('ledger-2')).map((e) => e.type)).toEqual([
      'CreditGranted',
      'AccountCharged',
      'AccountCharged',
      'CreditExhausted',
    ]);
  });

  it('earns each charge exactly once, though the charge is delivered twice and the earning runs again after a restart', async () => {
    // The process goes down before its reactor worker runs anything: the delivery still queues the charge durably.
    await worker.stop();
    await charge(3, 8, 10, '11:00', '12:00');
    const [recorded] = (await stream('ledger-3')) as [EventEnvelope];
    expect(recorded).toMatchObject({
      type: 'AccountCharged',
      data: { userId: 3, hostId: 8, amountMicros: 750_000 },
    });
    const queued = () =>
      db.query<{ event_id: string; done: boolean }>(
        `SELECT event_id, done_at IS NOT NULL AS done FROM marketplace.reactor_queue WHERE reactor = 'host_earnings' AND event_id = $1`,
        [recorded.eventId],
      );
    await eventually(
      async () => ((await queued()).length === 1 ? true : undefined),
      10_000,
      'the charge queued for the host earning',
    );
    // Delivered a second time (a consumer rebalance): still one queued item.
    const [subscription] = worker.subscriptions('redelivery');
    await subscription!.handle(recorded, { topic: 't', partition: 0, offset: '0' });
    expect(await queued()).toEqual([{ event_id: recorded.eventId, done: false }]);
    // A first run appended the earning and crashed before marking the item done...
    const reactor = new HostEarningsReactor(runtime);
    await reactor.react(recorded as EnvelopeOf<AccountCharged>);
    // ...so the restarted worker runs it again.
    const restarted = new ReactorWorker(db, runtime.schema, [reactor], { pollIntervalMs: 50 });
    restarted.start();
    try {
      await eventually(
        async () => ((await queued())[0]?.done ? true : undefined),
        10_000,
        'the queued earning done after the restart',
      );
    } finally {
      await restarted.stop();
    }
    const earned = (await stream('ledger-8')).filter((e) => e.type === 'HostEarned');
    expect(earned.map((e) => e.data)).toEqual([
      expect.objectContaining({
        userId: 8,
        instanceId: 10,
        amountMicros: 750_000,
        chargeId: recorded.eventId,
      }),
    ]);
    const host = await entries(8, ['earning']);
    expect(host).toMatchObject({
      balance: 0.75,
      entries: [expect.objectContaining({ type: 'earning', amount: 0.75, instance_id: 10 })],
    });
  });
});
