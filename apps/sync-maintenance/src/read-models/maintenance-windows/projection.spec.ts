import type { MaintenanceScheduled } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { maintenanceWindowsProjection } from './projection';

const at = '2026-05-01T12:00:00.000Z';
const scheduled = (
  machineId: number,
  windowId: number,
  startTime: number,
): SpecEvent<MaintenanceScheduled> => ({
  streamId: `maintenance-${machineId}`,
  type: 'MaintenanceScheduled',
  data: {
    machineId,
    windowId,
    ownerId: 2,
    startTime,
    endTime: startTime + 3600,
    durationHours: 1,
    category: 'power',
    at,
  },
});

describe('maintenance_windows projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, maintenanceWindowsProjection);
  afterAll(() => spec.close());

  it('lists scheduled windows and drops the ones a cancel names', () =>
    spec
      .given([scheduled(40, 1, 1000), scheduled(40, 2, 9000), scheduled(41, 3, 5000)])
      .when({
        streamId: 'maintenance-40',
        type: 'MaintenanceCanceled',
        data: { machineId: 40, windowIds: [1, 2], at },
      })
      .then(
        `SELECT window_id, machine_id, owner_id, start_time, end_time, duration_hours, category FROM sync_maintenance.maintenance_windows`,
        [
          {
            window_id: 3,
            machine_id: 41,
            owner_id: 2,
            start_time: 5000,
            end_time: 8600,
            duration_hours: 1,
            category: 'power',
          },
        ],
      ));
});
