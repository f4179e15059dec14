import type {
  VolumeCreated,
  VolumeDeleted,
  VolumeSpaceListed,
  VolumeSpaceUnlisted,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

const epoch = (iso: string) => Date.parse(iso) / 1000;

export const volumeOffersProjection = defineProjection<
  VolumeSpaceListed | VolumeSpaceUnlisted | VolumeCreated | VolumeDeleted
>({
  name: 'volume_offers',
  version: 1,
  sources: [
    { context: 'marketplace', streamType: 'machine' },
    { context: 'marketplace', streamType: 'volume' },
  ],
  tables: [`${SCHEMA}.volume_offers`, `${SCHEMA}.volumes`],
  eventTypes: ['VolumeSpaceListed', 'VolumeSpaceUnlisted', 'VolumeCreated', 'VolumeDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'VolumeSpaceListed':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.volume_offers (machine_id, host_id, size_gb, price_disk, end_date, listed, listed_at)
           VALUES ($1, $2, $3, $4, $5, TRUE, $6)
           ON CONFLICT (machine_id) DO UPDATE SET size_gb = EXCLUDED.size_gb, price_disk = EXCLUDED.price_disk,
             end_date = EXCLUDED.end_date, listed = TRUE, listed_at = EXCLUDED.listed_at`,
          [
            event.data.machineId,
            event.data.ownerId,
            event.data.sizeGb,
            event.data.priceDisk,
            event.data.endDate,
            epoch(event.data.listedAt),
          ],
        );
        return;
      case 'VolumeSpaceUnlisted':
        await sql.execute(`UPDATE ${SCHEMA}.volume_offers SET listed = FALSE WHERE machine_id = $1`, [
          event.data.machineId,
        ]);
        return;
      case 'VolumeCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.volumes (volume_id, owner_id, machine_id, size_gb, name, price_disk, start_date) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            event.data.volumeId,
            event.data.ownerId,
            event.data.machineId,
            event.data.sizeGb,
            event.data.name,
            event.data.priceDisk,
            epoch(event.data.createdAt),
          ],
        );
        await sql.execute(`UPDATE ${SCHEMA}.volume_offers SET used_gb = used_gb + $2 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.sizeGb,
        ]);
        return;
      case 'VolumeDeleted':
        await sql.execute(`UPDATE ${SCHEMA}.volumes SET deleted_at = $2 WHERE volume_id = $1`, [
          event.data.volumeId,
          epoch(event.data.deletedAt),
        ]);
        await sql.execute(
          `UPDATE ${SCHEMA}.volume_offers SET used_gb = GREATEST(0, used_gb - $2) WHERE machine_id = $1`,
          [event.data.machineId, event.data.sizeGb],
        );
        return;
    }
  },
});
