import type { CommandBus } from '@nestjs/cqrs';
import { ContextRuntime, Database, ManualClock } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { SCHEMA } from '../../schema';
import { ScheduledJobRunner } from '../../scheduled-jobs/scheduled-job.runner';
import { ProvisioningRecovery } from './provisioning-recovery';

/**
 * The provisioning-recovery sweep's schedule (PGlite, the runtime's clock set by hand, the timers faked): the
 * first look 10 s after start, then at the oldest open rent's deadline (its last step + `staleAfterMs`, no
 * sooner than 5 s), or after `intervalMs` while no rent is open. And the background jobs of the context start no
 * work once they are stopped (the app closes its database right after).
 */
describe('provisioning recovery and scheduled jobs (PGlite)', () => {
  let db: Database;
  let transport: InProcessTransport;
  let runtime: ContextRuntime;
  const clock = new ManualClock(new Date('2026-06-01T12:00:00.000Z'));
  const options = { staleAfterMs: 30_000, intervalMs: 60_000 };

  /** The statements that read or write `table` while `body` runs (the runtime's relay polls the same database). */
  const statementsOn = async (table: string, body: () => Promise<void>): Promise<number> => {
    const query = jest.spyOn(db, 'query');
    const execute = jest.spyOn(db, 'execute');
    try {
      await body();
      return [query, execute].reduce(
        (n, spy) => n + spy.mock.calls.filter(([sql]) => String(sql).includes(table)).length,
        0,
      );
    } finally {
      query.mockRestore();
      execute.mockRestore();
    }
  };

  /** A rent in progress whose last step was `agoMs` before the clock's now. */
  const openRent = (instanceId: number, agoMs: number) =>
    db.execute(
      `INSERT INTO ${SCHEMA}.open_provisionings (instance_id, machine_id, step, updated_at) VALUES ($1, 1, 'allocated', $2)`,
      [instanceId, new Date(clock.now().getTime() - agoMs).toISOString()],
    );

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    transport = new InProcessTransport();
    runtime = await ContextRuntime.start(instanceLifecycleContext, { db, transport, clock });
    // Nothing here publishes; the relay's polls would only share the faked timers.
    await runtime.relay.stop();
  });
  afterEach(async () => {
    jest.useRealTimers();
    await db.execute(`DELETE FROM ${SCHEMA}.open_provisionings`);
  });
  afterAll(async () => {
    await runtime.stop();
    await transport.close();
    await db.close();
  });

  it('sweeps 10 s after start, then after 60 s while no rent is open, then at the open rent’s deadline, no sooner than 5 s apart', async () => {
    // Only the sweep's own timer is faked (the database's I/O runs as it does).
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'performance'] });
    const recovery = new ProvisioningRecovery(runtime, options);
    let sweeps = 0;
    const sweep = recovery.sweep.bind(recovery);
    jest.spyOn(recovery, 'sweep').mockImplementation((ms) => {
      sweeps += 1;
      return sweep(ms);
    });
    /**
     * Advances the faked time by `ms`, then lets a sweep that fell due run with its look for the next one (the
     * sweep's timer is set again once the database answered); the sweeps so far.
     */
    const after = async (ms: number): Promise<number> => {
      await jest.advanceTimersByTimeAsync(ms);
      while (jest.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      return sweeps;
    };
    recovery.onApplicationBootstrap();
    try {
      // The first look 10 s after start (a crash may have left rents open).
      expect(await after(9_999)).toBe(0);
      expect(await after(1)).toBe(1);
      // No rent open: the next look after intervalMs (60 s).
      expect(await after(59_999)).toBe(1);
      // A rent opens meanwhile (its last step just now), so the look after this one is at its deadline, 30 s on.
      await openRent(101, 0);
      expect(await after(1)).toBe(2);
      expect(await after(29_999)).toBe(2);
      expect(await after(1)).toBe(3);
      // Its deadline 2 s away when that look ends (the clock moved 28 s on): the next look 5 s after it.
      clock.advance(28_000);
      expect(await after(29_999)).toBe(3);
      expect(await after(1)).toBe(4);
      expect(await after(4_999)).toBe(4);
      expect(await after(1)).toBe(5);
      // Two rents open: the older decides (its deadline 20 s away).
      await db.execute(`DELETE FROM ${SCHEMA}.open_provisionings`);
      await openRent(102, 10_000);
      await openRent(103, 0);
      expect(await after(5_000)).toBe(6);
      expect(await after(19_999)).toBe(6);
      expect(await after(1)).toBe(7);
    } finally {
      await recovery.onApplicationShutdown();
    }
  });

  /**
   * Given a run started and one queued behind it, when the job shuts down: shutdown waits for the first (which
   * answers `answer`), the queued one and one asked for afterwards are refused with `refusal`, and only the
   * first read `table`.
   */
  const stoppedMidRun = async <T>(
    job: { onApplicationShutdown(): Promise<void> },
    run: () => Promise<T>,
    table: string,
    answer: T,
    refusal: string,
  ): Promise<void> => {
    let queued: Promise<T> | undefined;
    const during = await statementsOn(table, async () => {
      const running = run();
      queued = run();
      await job.onApplicationShutdown();
      await expect(running).resolves.toEqual(answer);
    });
    await expect(queued).rejects.toThrow(refusal);
    expect(during).toBe(1);
    const afterStop = await statementsOn(table, async () => {
      await expect(run()).rejects.toThrow(refusal);
    });
    expect(afterStop).toBe(0);
  };

  it('a sweep asked for after shutdown, or queued behind the one shutdown waited for, is refused and reads nothing', async () => {
    const recovery = new ProvisioningRecovery(runtime, { ...options, intervalMs: 0 });
    recovery.onApplicationBootstrap();
    await stoppedMidRun(
      recovery,
      () => recovery.sweep(),
      'open_provisionings',
      0,
      'provisioning recovery is stopped',
    );
  });

  it('a scheduled-jobs pass asked for after shutdown, or queued behind the one shutdown waited for, is refused and reads nothing', async () => {
    // No job is due: the command bus is never used.
    const runner = new ScheduledJobRunner(runtime, {} as CommandBus, 0);
    runner.onApplicationBootstrap();
    await stoppedMidRun(
      runner,
      () => runner.runOnce(),
      'scheduled_jobs',
      [],
      'the scheduled job runner is stopped',
    );
  });
});
