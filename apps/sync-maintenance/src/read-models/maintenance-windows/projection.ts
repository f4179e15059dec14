import { MAINTENANCE_FEED, type MaintenanceEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Each machine's maintenance windows (inline: read-your-writes). */
export const maintenanceWindowsProjection = defineProjection<MaintenanceEvent>({
  name: 'maintenance_windows',
  version: 1,
  ...MAINTENANCE_FEED,
  tables: [`${SCHEMA}.maintenance_windows`],
  async apply(sql, event) {
    switch (event.type) {
      case 'MaintenanceScheduled': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.maintenance_windows (window_id, machine_id, owner_id, start_time, end_time, duration_hours, category)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (window_id) DO NOTHING`,
          [d.windowId, d.machineId, d.ownerId, d.startTime, d.endTime, d.durationHours, d.category],
        );
        return;
      }
      case 'MaintenanceCanceled':
        await sql.execute(`DELETE FROM ${SCHEMA}.maintenance_windows WHERE window_id = ANY($1::int[])`, [
          event.data.windowIds,
        ]);
        return;
    }
  },
});
