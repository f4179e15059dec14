import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { VolumeCreated, VolumeRefused } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME, PENDING_KEY_BOX } from '../instance-lifecycle.tokens';
import { runInstanceCommand } from './instance-commands';
import type { PendingKeyBox } from './pending-keys';

/**
 * marketplace's answer to an instance's volume_info create_new: VolumeCreated (with the instanceId) ->
 * InstanceVolumeAttached, then the host provisions the container with the volume, as for a linked one;
 * VolumeRefused -> the instance is exited with a status_msg saying why. Idempotent: the decider ignores a
 * repeated answer, and the container is provisioned only while the instance's key waits in
 * pending_provisions (moved into its provision command, host_commands, with the attachment).
 */
const UNSEALABLE =
  'its instance key could not be opened: the instance-lifecycle processes must share RIGMARKET_INSTANCE_SEAL_KEY';

@Injectable()
export class VolumeForInstanceReactor
  implements Reactor<VolumeCreated | VolumeRefused>, OnApplicationBootstrap
{
  readonly name = 'attach_created_volumes';
  readonly sources = [{ context: 'marketplace', streamType: 'volume' }] as const;
  readonly eventTypes = ['VolumeCreated', 'VolumeRefused'] as const;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(PENDING_KEY_BOX) private readonly pendingKeys: PendingKeyBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  wants(event: EnvelopeOf<VolumeCreated | VolumeRefused>): boolean {
    return (
      (event.type === 'VolumeCreated' && event.data.instanceId !== undefined) ||
      event.type === 'VolumeRefused'
    );
  }

  async react(event: EnvelopeOf<VolumeCreated | VolumeRefused>): Promise<void> {
    const metadata = causedBy(event);
    if (event.type === 'VolumeCreated' && event.data.instanceId !== undefined) {
      const { instanceId, volumeId, ownerId, machineId } = event.data;
      if ((await this.pendingKey(instanceId)) === null) {
        // Sealed under another seal key (a restart without RIGMARKET_INSTANCE_SEAL_KEY): the host could not be given it.
        await runInstanceCommand(
          this.runtime,
          instanceId,
          { type: 'FailVolume', reason: UNSEALABLE },
          metadata,
        );
        await this.forget(instanceId);
        return;
      }
      // Its provision command (host_commands) is written with the attachment and takes the waiting key.
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'AttachVolume', volumeId, ownerId, machineId },
        metadata,
      );
    } else if (event.type === 'VolumeRefused') {
      await runInstanceCommand(
        this.runtime,
        event.data.instanceId,
        { type: 'FailVolume', reason: event.data.reason },
        metadata,
      );
      await this.forget(event.data.instanceId);
    }
  }

  /** The waiting instance's key: undefined when none waits (already provisioned), null when it cannot be opened. */
  private async pendingKey(instanceId: number): Promise<string | null | undefined> {
    const rows = await this.runtime.db.query<{ instance_api_key_sealed: string }>(
      `SELECT instance_api_key_sealed FROM ${SCHEMA}.pending_provisions WHERE instance_id = $1`,
      [instanceId],
    );
    const sealed = rows[0]?.instance_api_key_sealed;
    return sealed === undefined ? undefined : this.pendingKeys.open(sealed, instanceId);
  }

  private async forget(instanceId: number): Promise<void> {
    await this.runtime.db.execute(`DELETE FROM ${SCHEMA}.pending_provisions WHERE instance_id = $1`, [
      instanceId,
    ]);
  }
}
