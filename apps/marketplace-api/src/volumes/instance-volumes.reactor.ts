import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { EventMetadata, InstanceCreated } from '@rigmarket/contracts';
import {
  type CommandBody,
  type ContextRuntime,
  type EnvelopeOf,
  type Reactor,
  type ReactorWorker,
  causedBy,
} from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { volumeDecider, volumeStreamId, type VolumeCommand } from './volume.decider';
import { volumeSpaceDecider, volumeSpaceStreamId } from './volume-space.decider';
import { findVolumeOffer } from './volumes.handlers';

export interface InstanceVolumeRequest {
  instanceId: number;
  ownerId: number;
  /** The instance's machine; a volume offer's id is its machine's id. */
  machineId: number;
  volumeOfferId: number;
  sizeGb: number;
  name: string | null;
}

/**
 * Creates the volume an instance asked for (volume_info create_new) for its renter, or records why it
 * cannot (VolumeRefused). The machine's volume-space stream decides once per instance, so a repeated
 * reaction appends nothing new: it finds the first outcome and its volume id there.
 */
export async function createVolumeForInstance(
  runtime: ContextRuntime,
  request: InstanceVolumeRequest,
  metadata: EventMetadata,
): Promise<void> {
  const offer =
    request.volumeOfferId === request.machineId
      ? await findVolumeOffer(runtime, request.volumeOfferId)
      : null;
  const candidateId = await runtime.nextId('volume_ids');
  const { state: space } = await runtime.runner.run(
    volumeSpaceStreamId(request.machineId),
    volumeSpaceDecider,
    {
      type: 'ReserveSpaceForInstance',
      machineId: request.machineId,
      volumeId: candidateId,
      instanceId: request.instanceId,
      sizeGb: request.sizeGb,
      listedGb: offer?.sizeGb ?? 0,
      listed: offer?.rentable ?? false,
    },
    metadata,
    { maxAttempts: 50 },
  );
  const outcome = space.forInstance[request.instanceId];
  if (!outcome) throw new Error(`instance ${request.instanceId}: no volume space outcome recorded`);
  const volume = {
    volumeId: outcome.volumeId,
    ownerId: request.ownerId,
    machineId: request.machineId,
    sizeGb: request.sizeGb,
  };
  const command: CommandBody<VolumeCommand> =
    outcome.refused === null
      ? {
          type: 'CreateVolume',
          ...volume,
          name: request.name,
          priceDisk: offer?.priceDisk ?? 0,
          freeGb: request.sizeGb,
          instanceId: request.instanceId,
        }
      : { type: 'RefuseVolume', ...volume, instanceId: request.instanceId, reason: outcome.refused };
  await runtime.runner.run(volumeStreamId(outcome.volumeId), volumeDecider, command, metadata);
}

/** instance-lifecycle's InstanceCreated with config.newVolume -> the volume is created (or refused) here. */
@Injectable()
export class InstanceVolumesReactor implements Reactor<InstanceCreated>, OnApplicationBootstrap {
  readonly name = 'create_instance_volumes';
  readonly sources = [{ context: 'instance', streamType: 'instance' }] as const;
  readonly eventTypes = ['InstanceCreated'] as const;
  private worker: ReactorWorker | undefined;

  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    this.worker = await this.runtime.addReactors([this]);
  }

  /**
   * Holds the context's reactor work back (queued events wait) until resume(): how the e2e suite provokes
   * the race for space.
   */
  async pause(): Promise<void> {
    await this.worker?.stop();
  }

  resume(): void {
    this.worker?.start();
  }

  wants(event: EnvelopeOf<InstanceCreated>): boolean {
    return Boolean(event.data.config.newVolume);
  }

  async react(event: EnvelopeOf<InstanceCreated>): Promise<void> {
    if (!event.data.config.newVolume) return;
    const wanted = event.data.config.newVolume;
    await createVolumeForInstance(
      this.runtime,
      {
        instanceId: event.data.instanceId,
        ownerId: event.data.renter,
        machineId: event.data.machineId,
        volumeOfferId: wanted.volumeOfferId,
        sizeGb: wanted.sizeGb,
        name: wanted.name,
      },
      causedBy(event),
    );
  }
}
