import { Inject, Injectable } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { PeriodicJob } from '../periodic-job';
import { beatSlots, silentMachines } from './liveness';
import { machineDecider, machineStreamId, reliabilityOf } from './machine.decider';

export const RELIABILITY_SWEEP_MS = Symbol('RELIABILITY_SWEEP_MS');

/** Default: every 10 minutes (RIGMARKET_RELIABILITY_SWEEP_MS; 0 turns the timer off, runOnce still works). */
export const DEFAULT_RELIABILITY_SWEEP_MS = 600_000;

/**
 * Reliability is up time over a rolling window, but heartbeats are what update it: a machine that goes
 * silent would keep its last score. The sweep recomputes, from its liveness slots (machine_liveness), the
 * reliability of each machine with a score above 0 and no heartbeat for two intervals; the decider appends
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
    const nowSeconds = now.getTime() / 1000;
    const changed: number[] = [];
    for (const machineId of await silentMachines(this.runtime.db, nowSeconds)) {
      const { state } = await this.runtime.runner.load(machineStreamId(machineId), machineDecider);
      if (state.status !== 'registered') continue;
      const slots = await this.runtime.db.transaction((sql) => beatSlots(sql, machineId, nowSeconds));
      const result = await this.runtime.runner.run(
        machineStreamId(machineId),
        machineDecider,
        { type: 'RecomputeReliability', reliability: reliabilityOf(slots, state.registeredAt, nowSeconds) },
        { correlationId: `reliability-sweep-${now.toISOString()}`, causationId: 'reliability-sweep' },
      );
      if (result.events.length > 0) changed.push(machineId);
    }
    return changed;
  }
}
