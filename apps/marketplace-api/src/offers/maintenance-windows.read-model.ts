import type { EventEnvelope, MaintenanceEvent } from '@rigmarket/contracts';
import type { Projection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../marketplace.read-models';

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
