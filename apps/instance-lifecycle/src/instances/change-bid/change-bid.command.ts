import { Command } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';

/** PUT /api/v0/instances/bid_price/{id}/ (change-bid.handler.ts). */
export class ChangeBidCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly price: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
