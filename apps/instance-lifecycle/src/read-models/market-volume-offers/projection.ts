import type {
  VolumeCreated,
  VolumeDeleted,
  VolumeSpaceListed,
  VolumeSpaceUnlisted,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Upserts only: machine and volume events arrive on two topics in any order, and the sums commute. */
export const marketVolumeOffersProjection = defineProjection<
  VolumeSpaceListed | VolumeSpaceUnlisted | VolumeCreated | VolumeDeleted
>({
  name: 'market_volume_offers',
  version: 1,
  sources: [
    { context: 'marketplace', streamType: 'machine' },
    { context: 'marketplace', streamType: 'volume' },
  ],
  tables: [`${SCHEMA}.market_volume_offers`],
  eventTypes: ['VolumeSpaceListed', 'VolumeSpaceUnlisted', 'VolumeCreated', 'VolumeDeleted'],
  async apply(sql, event) {
    const table = `${SCHEMA}.market_volume_offers`;
    switch (event.type) {
      case 'VolumeSpaceListed':
        await sql.execute(
          `INSERT INTO ${table} (machine_id, size_gb, listed, end_date) VALUES ($1, $2, TRUE, $3)
           ON CONFLICT (machine_id) DO UPDATE SET size_gb = EXCLUDED.size_gb, listed = TRUE, end_date = EXCLUDED.end_date`,
          [event.data.machineId, event.data.sizeGb, event.data.endDate],
        );
        return;
      case 'VolumeSpaceUnlisted':
        await sql.execute(
          `INSERT INTO ${table} (machine_id, listed) VALUES ($1, FALSE) ON CONFLICT (machine_id) DO UPDATE SET listed = FALSE`,
          [event.data.machineId],
        );
        return;
      case 'VolumeCreated':
      case 'VolumeDeleted': {
        const delta = event.type === 'VolumeCreated' ? event.data.sizeGb : -event.data.sizeGb;
        await sql.execute(
          `INSERT INTO ${table} (machine_id, used_gb) VALUES ($1, $2) ON CONFLICT (machine_id) DO UPDATE SET used_gb = ${table}.used_gb + EXCLUDED.used_gb`,
          [event.data.machineId, delta],
        );
        return;
      }
    }
  },
});
