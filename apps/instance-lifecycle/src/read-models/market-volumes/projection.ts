import type { VolumeCreated, VolumeDeleted } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Renters' volumes (for linking one to an instance): marketplace's volume events. */
export const marketVolumesProjection = defineProjection<VolumeCreated | VolumeDeleted>({
  name: 'market_volumes',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'volume' }],
  tables: [`${SCHEMA}.market_volumes`],
  eventTypes: ['VolumeCreated', 'VolumeDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'VolumeCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.market_volumes (volume_id, owner_id, machine_id, size_gb, name) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (volume_id) DO NOTHING`,
          [event.data.volumeId, event.data.ownerId, event.data.machineId, event.data.sizeGb, event.data.name],
        );
        return;
      case 'VolumeDeleted':
        await sql.execute(`UPDATE ${SCHEMA}.market_volumes SET deleted = TRUE WHERE volume_id = $1`, [
          event.data.volumeId,
        ]);
        return;
    }
  },
});
