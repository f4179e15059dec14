import type { EventEnvelope, VolumeEvent } from '@rigmarket/contracts';
import type { Migration, Projection, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../instance-lifecycle.read-models';

/**
 * What instance-lifecycle knows of the renters' volumes (marketplace's public volume events), so that
 * volume_info can link one: it must exist, be the renter's, and live on the instance's machine. Also
 * which machines run VMs (market_machines.vms_enabled, fed by MachineRegistered).
 */
export const marketVolumesMigration: Migration = {
  id: '0006-market-volumes-and-vms',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.market_volumes (
        volume_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        size_gb DOUBLE PRECISION NOT NULL,
        name TEXT,
        deleted BOOLEAN NOT NULL DEFAULT FALSE
      )`);
    await sql.execute(`ALTER TABLE ${s}.market_machines ADD COLUMN vms_enabled BOOLEAN NOT NULL DEFAULT FALSE`);
  },
};

/** Where a machine is (MachineRegistered's geolocation), for `launch instance -r REGION`. */
export const marketMachinesGeolocationMigration: Migration = {
  id: '0007-market-machines-geolocation',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.market_machines ADD COLUMN geolocation TEXT`);
  },
};

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
        await sql.execute(`UPDATE ${SCHEMA}.market_volumes SET deleted = TRUE WHERE volume_id = $1`, [event.data.volumeId]);
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
  return row ? { volumeId: Number(row.volume_id), ownerId: Number(row.owner_id), machineId: Number(row.machine_id), deleted: row.deleted } : null;
}
