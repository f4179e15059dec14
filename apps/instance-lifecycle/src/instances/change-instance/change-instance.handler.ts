import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { findMachine } from '../../read-models/market-machines/queries';
import { requirePositiveBalance } from '../account-credit';
import { allocateGpus, runInstanceCommand } from '../instance-commands';
import { instanceDecider, instanceStreamId } from '../instance.decider';
import { ChangeInstanceCommand } from './change-instance.command';

@CommandHandler(ChangeInstanceCommand)
export class ChangeInstanceHandler implements ICommandHandler<ChangeInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, changes, metadata }: ChangeInstanceCommand): Promise<void> {
    if (changes.label !== undefined) {
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'LabelInstance', requesterId, label: changes.label },
        metadata,
      );
    }
    if (changes.state === 'running') {
      await requirePositiveBalance(this.runtime.db, requesterId, 'starting an instance');
      await this.reallocateIfOutbid(requesterId, instanceId, metadata);
    }
    if (changes.state !== undefined) {
      // Its host is told through host_commands (an instance waiting for its volume is provisioned later).
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'SetIntendedState', requesterId, state: changes.state },
        metadata,
      );
    }
  }

  /** An outbid instance holds no GPUs: starting it takes them again at its bid (which may outbid others). */
  private async reallocateIfOutbid(
    requesterId: number,
    instanceId: number,
    metadata: EventMetadata,
  ): Promise<void> {
    const { state } = await this.runtime.runner.load(instanceStreamId(instanceId), instanceDecider);
    if (state.status !== 'active' || state.renter !== requesterId || !state.outbid) return;
    const machine = await findMachine(this.runtime.db, state.machineId);
    if (!machine)
      throw ApiError.conflict(
        'The machine is gone; destroy the instance and rent another offer',
        'offer_unavailable',
      );
    await allocateGpus(
      this.runtime,
      {
        machineId: state.machineId,
        instanceId,
        numGpus: state.numGpus,
        machineGpus: machine.numGpus,
        bid: state.bidPrice,
      },
      metadata,
    );
  }
}
