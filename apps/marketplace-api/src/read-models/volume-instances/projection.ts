import type { InstanceCreated, InstanceDestroyed, InstanceVolumeAttached } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/**
 * Which instances use each volume (`vastai show volumes` reads `instances`): an existing volume linked when
 * the instance was created (config.volume), or one created for it (InstanceVolumeAttached); gone when the
 * instance is destroyed.
 */
export const volumeInstancesProjection = defineProjection<
  InstanceCreated | InstanceVolumeAttached | InstanceDestroyed
>({
  name: 'volume_instances',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.volume_instances`],
  eventTypes: ['InstanceCreated', 'InstanceVolumeAttached', 'InstanceDestroyed'],
  async apply(sql, event) {
    const link = async (volumeId: number, instanceId: number) =>
      sql.execute(
        `INSERT INTO ${SCHEMA}.volume_instances (volume_id, instance_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        [volumeId, instanceId],
      );
    switch (event.type) {
      case 'InstanceCreated': {
        // Optional chaining: test fixtures (and nothing else) build InstanceCreated without a config.
        const volume = event.data.config?.volume;
        if (volume) await link(volume.volumeId, event.data.instanceId);
        return;
      }
      case 'InstanceVolumeAttached':
        await link(event.data.volumeId, event.data.instanceId);
        return;
      case 'InstanceDestroyed':
        await sql.execute(`DELETE FROM ${SCHEMA}.volume_instances WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        return;
    }
  },
});
