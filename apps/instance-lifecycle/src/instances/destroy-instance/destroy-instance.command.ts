import { Command } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';

/** DELETE /api/v0/instances/{id}/ (destroy-instance.handler.ts). */
export class DestroyInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
