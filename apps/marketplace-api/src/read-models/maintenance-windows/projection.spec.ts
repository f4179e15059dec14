import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { maintenanceWindowsProjection } from './projection';

const scheduled = (machineId: number, windowId: number, startTime: number) => ({
  streamId: `maintenance-${machineId}`,
  type: 'MaintenanceScheduled' as const,
  data: {
    machineId,
    windowId,
    ownerId: 3,
    startTime,
    endTime: startTime + 7200,
    durationHours: 2,
    category: 'power',
    at: AT,
  },
});

describe("marketplace's maintenance_windows projection", () => {
  const spec = projectionSpec(marketplaceContext, maintenanceWindowsProjection);
  afterAll(() => spec.close());

  it('keeps the windows that offers must not overlap, less the canceled ones', () =>
    spec
      .given([scheduled(7, 1, 1000), scheduled(7, 2, 20000), scheduled(8, 3, 5000)])
      .when({
        streamId: 'maintenance-7',
        type: 'MaintenanceCanceled',
        data: { machineId: 7, windowIds: [2], at: AT },
      })
      .then(
        `SELECT window_id, machine_id, start_time, end_time FROM marketplace.maintenance_windows ORDER BY 1`,
        [
          { window_id: 1, machine_id: 7, start_time: 1000, end_time: 8200 },
          { window_id: 3, machine_id: 8, start_time: 5000, end_time: 12200 },
        ],
      ));
});
