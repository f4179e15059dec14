import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { CreditExhausted } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { CREDIT_RELEASED_MSG } from '../read-models/instances/status-messages';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { releaseGpus, runInstanceCommand } from './instance-commands';

/** The status message of an instance stopped for credit (its GPUs released too). */
export const CREDIT_EXHAUSTED_MSG = CREDIT_RELEASED_MSG;

/**
 * marketplace's CreditExhausted -> every instance of that account meant to run is stopped (compute
 * billing ends; storage goes on until the renter destroys it or adds credit and starts it again), and every
 * instance of the account, stopped ones too, gives its GPUs back at once (InstanceOutbid with reason
 * `credit`, GpusReleased): an account without credit holds no GPUs. Starting needs credit again, and takes
 * GPUs again if free (as after an outbid). Runs as a reactor: queued from the delivery, carried out after it
 * (see ReactorWorker); a rerun finds nothing left to stop or release.
 */
@Injectable()
export class CreditExhaustedReactor implements Reactor<CreditExhausted>, OnApplicationBootstrap {
  readonly name = 'stop_instances_on_credit_exhausted';
  readonly sources = [{ context: 'marketplace', streamType: 'ledger' }] as const;
  readonly eventTypes = ['CreditExhausted'] as const;

  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<CreditExhausted>): Promise<void> {
    const userId = event.data.userId;
    const running = await this.runtime.db.query<{ instance_id: number }>(
      `SELECT instance_id FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed AND intended_status = 'running' ORDER BY instance_id`,
      [userId],
    );
    const metadata = causedBy(event);
    for (const { instance_id } of running) {
      const instanceId = Number(instance_id);
      // The host's stop goes to host_commands with the intent, carrying why.
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'SetIntendedState', requesterId: userId, state: 'stopped' },
        metadata,
        { stopMsg: CREDIT_EXHAUSTED_MSG },
      );
    }
    const holding = await this.runtime.db.query<{ instance_id: number; machine_id: number }>(
      `SELECT instance_id, machine_id FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed ORDER BY instance_id`,
      [userId],
    );
    for (const { instance_id, machine_id } of holding) {
      const instanceId = Number(instance_id);
      await runInstanceCommand(this.runtime, instanceId, { type: 'MarkOutbid', reason: 'credit' }, metadata);
      // Idempotent: releasing what the machine's allocation no longer holds appends nothing.
      await releaseGpus(this.runtime, Number(machine_id), instanceId, metadata);
    }
  }
}
