import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { runInstanceCommand } from '../instance-commands';
import { RestartInstanceCommand } from './restart-instance.command';

/** Reboot and recycle (docs/client-compat.md 2.5): the host restarts or recreates the container. */
@CommandHandler(RestartInstanceCommand)
export class RestartInstanceHandler implements ICommandHandler<RestartInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, recycle, metadata }: RestartInstanceCommand): Promise<void> {
    await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'RestartInstance', requesterId, recycle },
      metadata,
    );
  }
}
