import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { ALLOCATION_ATTEMPTS, releaseGpus, releaseOnDestroy, runInstanceCommand } from '../instance-commands';
import type { InstanceState } from '../instance.decider';
import { DestroyInstanceCommand } from './destroy-instance.command';

/**
 * Idempotent: destroying a destroyed instance of one's own succeeds again (the CLI repeats it). The GPUs are
 * released in the destroying transaction.
 */
@CommandHandler(DestroyInstanceCommand)
export class DestroyInstanceHandler implements ICommandHandler<DestroyInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, metadata }: DestroyInstanceCommand): Promise<void> {
    const result = await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'DestroyInstance', requesterId },
      metadata,
      { alongside: releaseOnDestroy(this.runtime), maxAttempts: ALLOCATION_ATTEMPTS },
    );
    const state: InstanceState = result.state;
    // A repeat releases what an older release's crash may have left held between its two transactions.
    if (state.status === 'destroyed' && result.decided.length === 0)
      await releaseGpus(this.runtime, state.machineId, instanceId, metadata);
  }
}
