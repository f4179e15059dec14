import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, parseExecCommand } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import type { HostDriver } from '../host/host-driver';
import { HOST_DRIVER, INSTANCE_RUNTIME, LOG_STORE } from '../instance-lifecycle.tokens';
import type { LogStore } from './log-store';
import { liveInstanceOwner, resultFileName } from './logs.handlers';

export class ExecuteCommand extends Command<{ file: string }> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly command: unknown,
  ) {
    super();
  }
}

/**
 * `vastai execute` (docs/instances.md, "Execute"): refuses anything but ls, rm or du with plain words
 * (400 `invalid_command`) and another renter's instance like a missing one (404 `no_such_instance`); the
 * host agent runs the command in the container and its output is stored for result_url.
 */
@CommandHandler(ExecuteCommand)
export class ExecuteHandler implements ICommandHandler<ExecuteCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(HOST_DRIVER) private readonly host: HostDriver,
    @Inject(LOG_STORE) private readonly store: LogStore,
  ) {}

  async execute({ requesterId, instanceId, command }: ExecuteCommand): Promise<{ file: string }> {
    if ((await liveInstanceOwner(this.runtime, instanceId)) !== requesterId)
      throw new ApiError(404, 'no_such_instance', `No such instance: ${instanceId}`);
    const parsed = parseExecCommand(command);
    if (!parsed.ok) throw new ApiError(400, 'invalid_command', parsed.reason);
    const output = await this.host.execute(instanceId, parsed.argv);
    const file = resultFileName();
    await this.store.put(file, output);
    return { file };
  }
}
