import { Inject, Injectable } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { PeriodicJob } from '../periodic-job';
import { HEARTBEAT_INTERVAL_S, machineDecider, machineStreamId } from './machine.decider';

export const RELIABILITY_SWEEP_MS = Symbol('RELIABILITY_SWEEP_MS');

/** Default: every 10 minutes (RIGMARKET_RELIABILITY_SWEEP_MS; 0 turns the timer off, runOnce still works). */
export const DEFAULT_RELIABILITY_SWEEP_MS = 600_000;

/**
 * Reliability is up time over a rolling window, but heartbeats are what update it: a machine that goes
 * silent would keep its last score. The sweep recomputes, on the machine's stream, the reliability of
 * each machine with a score above 0 and no heartbeat for two intervals; the decider appends
 * MachineReliabilityChanged when the value moved, so offers show the decay until it reaches 0.
 * `runOnce` sweeps at the runtime clock's now and returns the machines whose score changed.
 */
@Injectable()
export class ReliabilitySweep extends PeriodicJob<number[]> {
  constructor(
    @Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(RELIABILITY_SWEEP_MS) intervalMs: number,
  ) {
    super('ReliabilitySweep', intervalMs);
  }

  protected async work(): Promise<number[]> {
    const now = this.runtime.runner.clock.now();
    const silentSince = new Date(now.getTime() - 2 * HEARTBEAT_INTERVAL_S * 1000);
    const rows = await this.runtime.db.query<{ machine_id: number }>(
      `SELECT machine_id FROM ${SCHEMA}.machines WHERE reliability > 0 AND (last_heartbeat_at IS NULL OR last_heartbeat_at < $1) ORDER BY machine_id`,
      [silentSince.toISOString()],
    );
    const changed: number[] = [];
    for (const { machine_id } of rows) {
      const machineId = Number(machine_id);
      const result = await this.runtime.runner.handle(
        machineStreamId(machineId),
        machineDecider,
        (state, at) => machineDecider.decide({ type: 'RecomputeReliability', at: at.toISOString() }, state),
        { correlationId: `reliability-sweep-${now.toISOString()}`, causationId: 'reliability-sweep' },
      );
      if (result.events.length > 0) changed.push(machineId);
    }
    return changed;
  }
}
