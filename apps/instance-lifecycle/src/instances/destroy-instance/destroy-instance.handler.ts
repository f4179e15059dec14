import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { releaseGpus, runInstanceCommand } from '../instance-commands';
import type { InstanceState } from '../instance.decider';
import { DestroyInstanceCommand } from './destroy-instance.command';

/** Idempotent: destroying a destroyed instance of one's own succeeds again (the CLI repeats it). */
@CommandHandler(DestroyInstanceCommand)
export class DestroyInstanceHandler implements ICommandHandler<DestroyInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, metadata }: DestroyInstanceCommand): Promise<void> {
    const result = await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'DestroyInstance', requesterId },
      metadata,
    );
    const state: InstanceState = result.state;
    if (state.status !== 'destroyed') return;
    await releaseGpus(this.runtime, state.machineId, instanceId, metadata);
  }
}
