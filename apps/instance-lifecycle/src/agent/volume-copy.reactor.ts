import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { VolumeCreated } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AgentCopyRelay } from './agent-copy.relay';

/**
 * marketplace's VolumeCreated with cloneOf (`vastai clone volume`) -> the relay copies the source volume's
 * data into the new volume, from the source machine's host agent to the new one's. Idempotent: the volume's
 * volumecopy stream says whether the copy ran.
 */
@Injectable()
export class VolumeCopyReactor implements Reactor<VolumeCreated>, OnApplicationBootstrap {
  readonly name = 'volume_copies';
  readonly sources = [{ context: 'marketplace', streamType: 'volume' }] as const;
  readonly eventTypes = ['VolumeCreated'] as const;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly relay: AgentCopyRelay,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  wants(event: EnvelopeOf<VolumeCreated>): boolean {
    return event.data.cloneOf !== undefined;
  }

  async react(event: EnvelopeOf<VolumeCreated>): Promise<void> {
    const { cloneOf } = event.data;
    if (!cloneOf) return;
    await this.relay.startVolumeCopy(
      {
        volumeId: event.data.volumeId,
        machineId: event.data.machineId,
        srcVolumeId: cloneOf.volumeId,
        srcMachineId: cloneOf.machineId,
      },
      causedBy(event),
    );
  }
}
