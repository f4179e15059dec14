import { Command } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';

/** Reboot (recycle false) or recycle (true) an instance (restart-instance.handler.ts). */
export class RestartInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly recycle: boolean,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
