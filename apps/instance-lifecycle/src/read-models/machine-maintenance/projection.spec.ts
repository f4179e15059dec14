import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { machineMaintenanceProjection } from './projection';

const scheduled = (windowId: number, startTime: number) => ({
  streamId: 'maintenance-7',
  type: 'MaintenanceScheduled' as const,
  data: {
    machineId: 7,
    windowId,
    ownerId: 3,
    startTime,
    endTime: startTime + 3600,
    durationHours: 1,
    category: 'power',
    at: 'x',
  },
});

describe('machine_maintenance projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, machineMaintenanceProjection);
  afterAll(() => spec.close());

  it("keeps a machine's windows until they are canceled", () =>
    spec
      .given([scheduled(1, 1000), scheduled(2, 9000)])
      .when({
        streamId: 'maintenance-7',
        type: 'MaintenanceCanceled',
        data: { machineId: 7, windowIds: [1], at: 'x' },
      })
      .then(
        `SELECT window_id, machine_id, start_time, end_time, duration_hours, category FROM instance_lifecycle.machine_maintenance`,
        [
          {
            window_id: 2,
            machine_id: 7,
            start_time: 9000,
            end_time: 12600,
            duration_hours: 1,
            category: 'power',
          },
        ],
      ));
});
