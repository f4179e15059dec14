import { ContextRuntime, Database, type ReactorWorkerOptions, systemClock } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually } from '@rigmarket/testing';
import type { RoutingHostDriver } from '../agent/routing-host.driver';
import { DEFAULT_BACKUP_OPTIONS } from '../backups/backup-options';
import { EnvVarBox } from '../env-vars/env-var-box';
import { instanceLifecycleContext } from '../instance-lifecycle.context';
import { PendingKeyBox } from '../instances/pending-keys';
import { SCHEMA } from '../schema';
import { HostCommandDispatcher } from './host-command.dispatcher';
import { HostReporter } from './host-reporter';
import { SimulatedHostDriver } from './simulated-host.driver';
import { contextDatabase } from './testing/context-database';

/**
 * The host-command dispatcher's idle poll (PGlite): a command whose lease a stopped delivery left is taken
 * again when the lease ends, however far the idle back-off has grown, and an idle poll costs one statement
 * (the claim, which also reads when the first lease ends).
 */
describe('the host-command dispatcher while idle', () => {
  let db: Database;
  let transport: InProcessTransport;
  const delivered: { commandId: number; at: number }[] = [];
  /** A command id the host fails on (a driver error), if any. */
  let failOn: number | undefined;
  // The host: takes every command (the agent channel and the simulated host are tested elsewhere).
  const host = {
    deliver: async (command: { commandId: number }) => {
      if (command.commandId === failOn) throw new Error('the host driver failed');
      delivered.push({ commandId: command.commandId, at: Date.now() });
      return 'sent' as const;
    },
  } as unknown as RoutingHostDriver;
  const started: { runtime: ContextRuntime; dispatcher: HostCommandDispatcher }[] = [];

  /** The context's runtime and dispatcher on the database, as a process whose reactors have these options. */
  const startDispatcher = async (reactors: ReactorWorkerOptions): Promise<HostCommandDispatcher> => {
    const runtime = await ContextRuntime.start(instanceLifecycleContext, {
      db,
      transport,
      clock: systemClock,
      reactors,
      migrate: false,
    });
    const reporter = new HostReporter(runtime);
    const dispatcher = new HostCommandDispatcher(
      runtime,
      host,
      new SimulatedHostDriver(reporter, { pullMs: 10, bootMs: 10, stopMs: 10 }),
      reporter,
      PendingKeyBox.fromConfig('ab'.repeat(32)),
      EnvVarBox.fromConfig('cd'.repeat(32)),
      DEFAULT_BACKUP_OPTIONS,
    );
    started.push({ runtime, dispatcher });
    await dispatcher.onApplicationBootstrap();
    return dispatcher;
  };

  /** `n` stop commands of distinct instances, waiting for delivery; their ids in order. */
  const waiting = async (n: number): Promise<number[]> => {
    const rows = await db.query<{ command_id: string }>(
      `INSERT INTO ${SCHEMA}.host_commands (instance_id, machine_id, kind, event_id)
       SELECT i, 1, 'stop', 'e-' || gen_random_uuid() FROM generate_series(1, $1::int) AS i
       RETURNING command_id`,
      [n],
    );
    return rows.map((r) => Number(r.command_id)).sort((a, b) => a - b);
  };

  const deliveredIds = async (): Promise<number[]> =>
    (
      await db.query<{ command_id: string }>(
        `SELECT command_id FROM ${SCHEMA}.host_commands WHERE delivered_at IS NOT NULL ORDER BY command_id`,
      )
    ).map((r) => Number(r.command_id));

  /**
   * The dispatcher's statements on host_commands (those that contain `text`) from now on (the runtime's relay
   * polls the same database).
   */
  const countHostCommandStatements = (text = 'host_commands'): (() => number) => {
    const spies = [jest.spyOn(db, 'query'), jest.spyOn(db, 'execute')];
    return () =>
      spies.reduce(
        (n, spy) =>
          n +
          spy.mock.calls.filter(
            ([sql]) => String(sql).includes('host_commands') && String(sql).includes(text),
          ).length,
        0,
      );
  };

  /** A stop command whose delivery stopped (a killed process) with its lease ending in `ms`; its lease end. */
  const leftLeased = async (ms: number): Promise<{ commandId: number; leaseEnd: number }> => {
    const [row] = await db.query<{ command_id: string; lease_end: Date }>(
      `INSERT INTO ${SCHEMA}.host_commands (instance_id, machine_id, kind, event_id, claimed_until)
       VALUES (1, 1, 'stop', 'e-' || gen_random_uuid(), now() + $1 * interval '1 millisecond')
       RETURNING command_id, claimed_until AS lease_end`,
      [ms],
    );
    return { commandId: Number(row!.command_id), leaseEnd: new Date(row!.lease_end).getTime() };
  };

  beforeAll(async () => {
    db = await contextDatabase();
    transport = new InProcessTransport();
  });
  afterEach(async () => {
    for (const { runtime, dispatcher } of started.splice(0)) {
      await dispatcher.onApplicationShutdown();
      await runtime.stop();
    }
    await db.execute(`DELETE FROM ${SCHEMA}.host_commands`);
    delivered.splice(0);
    failOn = undefined;
  });
  afterAll(async () => {
    await transport.close();
    await db.close();
  });

  it('given a lease left by a stopped delivery, when the idle back-off has grown past it, then the command is delivered when the lease ends', async () => {
    // Embedded back-off: 1 s, 2 s, 4 s, 8 s ... up to 60 s between polls that find nothing.
    const { commandId, leaseEnd } = await leftLeased(7_500);
    await startDispatcher({ idlePollMaxMs: 60_000 });
    const sent = await eventually(
      async () => delivered.find((d) => d.commandId === commandId),
      30_000,
      'the command delivered',
    );
    // Not before its lease ended; at the poll the lease's end asked for (the back-off alone polls at ~14 s).
    expect(sent.at).toBeGreaterThanOrEqual(leaseEnd - 50);
    expect(sent.at - leaseEnd).toBeLessThan(4_000);
    const [row] = await db.query<{ delivered: boolean }>(
      `SELECT delivered_at IS NOT NULL AS delivered FROM ${SCHEMA}.host_commands WHERE command_id = $1`,
      [commandId],
    );
    expect(row!.delivered).toBe(true);
  });

  it('given a lease another process holds, an idle poll runs one statement (distributed: a poll every second)', async () => {
    await leftLeased(60_000);
    const d = await startDispatcher({});
    let polls = 0;
    const kick = d.kick.bind(d);
    jest.spyOn(d, 'kick').mockImplementation(() => {
      polls += 1;
      kick();
    });
    const statements = countHostCommandStatements();
    try {
      await eventually(async () => (polls >= 4 ? true : undefined), 30_000, 'four polls');
      await d.idle();
      // Each poll's claim (the window may have cut one short at its start).
      expect(statements()).toBeGreaterThanOrEqual(polls - 1);
      expect(statements()).toBeLessThanOrEqual(polls + 1);
      expect(delivered).toEqual([]);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('given 20 waiting commands, when one poll delivers them, then they go in order and are marked delivered in one statement', async () => {
    const d = await startDispatcher({});
    await d.idle();
    const ids = await waiting(20);
    const marks = countHostCommandStatements('SET delivered_at');
    try {
      d.kick();
      await eventually(async () => (delivered.length === 20 ? true : undefined), 30_000, 'all delivered');
      await d.idle();
      expect(delivered.map((c) => c.commandId)).toEqual(ids);
      expect(await deliveredIds()).toEqual(ids);
      expect(marks()).toBe(1);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('given a host that fails on the third command, then the two handed over before it are marked delivered and the rest wait for their lease', async () => {
    const ids = await waiting(5);
    failOn = ids[2];
    const d = await startDispatcher({});
    await eventually(async () => (delivered.length === 2 ? true : undefined), 30_000, 'two delivered');
    await d.idle();
    expect(await deliveredIds()).toEqual(ids.slice(0, 2));
    const [held] = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${SCHEMA}.host_commands WHERE delivered_at IS NULL AND claimed_until > now()`,
    );
    expect(Number(held!.n)).toBe(3);
  });
});
