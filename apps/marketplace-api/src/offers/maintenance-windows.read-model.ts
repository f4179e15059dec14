import type { EventEnvelope, MaintenanceEvent } from '@rigmarket/contracts';
import type { Migration, Projection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../marketplace.read-models';

/**
 * Hosts' maintenance windows, from sync-maintenance's public events over the transport. The offer
 * search reads them at query time (offer-query.ts, rentableUntil): an offer can be rented only until
 * the next window starts, and not at all during one. Windows are kept past their end (the search
 * ignores them); a cancel deletes the machine's pending ones.
 */
export const maintenanceWindowsMigration: Migration = {
  id: '0007-maintenance-windows',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.maintenance_windows (
        window_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX maintenance_windows_by_machine ON ${s}.maintenance_windows (machine_id, end_time)`,
    );
  },
};

export const maintenanceWindowsProjection: Projection = {
  name: 'maintenance_windows',
  version: 1,
  sources: [{ context: 'sync', streamType: 'maintenance' }],
  tables: [`${SCHEMA}.maintenance_windows`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MaintenanceEvent;
    switch (event.type) {
      case 'MaintenanceScheduled':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.maintenance_windows (window_id, machine_id, start_time, end_time) VALUES ($1, $2, $3, $4) ON CONFLICT (window_id) DO NOTHING`,
          [event.data.windowId, event.data.machineId, event.data.startTime, event.data.endTime],
        );
        return;
      case 'MaintenanceCanceled':
        await sql.execute(`DELETE FROM ${SCHEMA}.maintenance_windows WHERE window_id = ANY($1::int[])`, [
          event.data.windowIds,
        ]);
        return;
      default:
        return;
    }
  },
};
