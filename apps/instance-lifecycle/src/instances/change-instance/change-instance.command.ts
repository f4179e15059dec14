import { Command } from '@nestjs/cqrs';
import type { EventMetadata, InstanceIntendedStatus } from '@rigmarket/contracts';

export interface InstanceChanges {
  state?: InstanceIntendedStatus;
  label?: string;
}

/** PUT /api/v0/instances/{id}/: a new label and/or intended state (change-instance.handler.ts). */
export class ChangeInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly changes: InstanceChanges,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
