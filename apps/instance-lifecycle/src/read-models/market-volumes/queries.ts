import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

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
