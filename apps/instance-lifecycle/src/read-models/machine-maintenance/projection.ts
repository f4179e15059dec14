import { MAINTENANCE_FEED, type MaintenanceEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Machines' maintenance windows (upcoming_maintenance on instance rows): sync-maintenance's events. */
export const machineMaintenanceProjection = defineProjection<MaintenanceEvent>({
  name: 'machine_maintenance',
  version: 1,
  ...MAINTENANCE_FEED,
  tables: [`${SCHEMA}.machine_maintenance`],
  async apply(sql, event) {
    switch (event.type) {
      case 'MaintenanceScheduled': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.machine_maintenance (window_id, machine_id, start_time, end_time, duration_hours, category) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (window_id) DO NOTHING`,
          [d.windowId, d.machineId, d.startTime, d.endTime, d.durationHours, d.category],
        );
        return;
      }
      case 'MaintenanceCanceled':
        await sql.execute(`DELETE FROM ${SCHEMA}.machine_maintenance WHERE window_id = ANY($1::int[])`, [
          event.data.windowIds,
        ]);
        return;
    }
  },
});
