import { MAINTENANCE_FEED, type MaintenanceEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Machines' maintenance windows, for the offers search (machines under maintenance are not offered). */
export const maintenanceWindowsProjection = defineProjection<MaintenanceEvent>({
  name: 'maintenance_windows',
  version: 1,
  ...MAINTENANCE_FEED,
  tables: [`${SCHEMA}.maintenance_windows`],
  async apply(sql, event) {
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
    }
  },
});
