import type { EventEnvelope, MachineEvent, VolumeEvent } from '@rigmarket/contracts';
import type { Projection, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../instance-lifecycle.read-models';

/** Upserts only: machine and volume events arrive on two topics in any order, and the sums commute. */
export const marketVolumeOffersProjection: Projection = {
  name: 'market_volume_offers',
  version: 1,
  sources: [
    { context: 'marketplace', streamType: 'machine' },
    { context: 'marketplace', streamType: 'volume' },
  ],
  tables: [`${SCHEMA}.market_volume_offers`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MachineEvent | VolumeEvent;
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
      default:
        return;
    }
  },
};

/** Free GB of a listed, unexpired volume offer as far as instance-lifecycle knows; null when there is none. */
export async function volumeOfferFreeGb(
  sql: Sql,
  volumeOfferId: number,
  nowSeconds: number,
): Promise<number | null> {
  const rows = await sql.query<{ free_gb: number }>(
    `SELECT size_gb - used_gb AS free_gb FROM ${SCHEMA}.market_volume_offers WHERE machine_id = $1 AND listed AND (end_date IS NULL OR end_date > $2)`,
    [volumeOfferId, nowSeconds],
  );
  return rows[0] ? Math.max(0, Number(rows[0].free_gb)) : null;
}

export const marketVolumesProjection: Projection = {
  name: 'market_volumes',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'volume' }],
  tables: [`${SCHEMA}.market_volumes`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as VolumeEvent;
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
      default:
        return;
    }
  },
};

export interface VolumeRecord {
  volumeId: number;
  ownerId: number;
  machineId: number;
  deleted: boolean;
}

export async function findVolume(sql: Sql, volumeId: number): Promise<VolumeRecord | null> {
  const rows = await sql.query<{ volume_id: number; owner_id: number; machine_id: number; deleted: boolean }>(
    `SELECT volume_id, owner_id, machine_id, deleted FROM ${SCHEMA}.market_volumes WHERE volume_id = $1`,
    [volumeId],
  );
  const row = rows[0];
  return row
    ? {
        volumeId: Number(row.volume_id),
        ownerId: Number(row.owner_id),
        machineId: Number(row.machine_id),
        deleted: row.deleted,
      }
    : null;
}
