import { Command } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';
import type { CreateRequest } from './create-request';

export interface CreatedInstance {
  instanceId: number;
  instanceApiKey: string;
}

/** Accepting an offer (PUT /api/v0/asks/{id}/ and the launch route): create-instance.handler.ts. */
export class CreateInstanceCommand extends Command<CreatedInstance> {
  constructor(
    readonly renter: number,
    readonly offerId: number,
    readonly request: CreateRequest,
    readonly metadata: EventMetadata,
    /** The Idempotency-Key header, if any. */
    readonly idempotencyKey: string | null = null,
    /**
     * The machine owner's default job (`vastai set defjob`): on the owner's own machine, listed or not, at a
     * bid of 0 that every rental outbids (docs/instances.md, "Default jobs").
     */
    readonly defaultJob = false,
  ) {
    super();
  }
}

/** Offer id = machine_id * 1000 + num_gpus (docs/marketplace.md). */
export const offerParts = (offerId: number) => ({
  machineId: Math.floor(offerId / 1000),
  numGpus: offerId % 1000,
});
