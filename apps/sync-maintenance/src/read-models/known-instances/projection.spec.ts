import type { InstanceCreated, InstanceDestroyed } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { knownInstancesProjection } from './projection';

const created = (instanceId: number, renter: number, machineId: number): SpecEvent<InstanceCreated> => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated',
  data: { instanceId, renter, machineId } as InstanceCreated['data'],
});

describe('known_instances projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, knownInstancesProjection);
  afterAll(() => spec.close());

  it('knows each instance with its owner and machine, and marks it destroyed', () =>
    spec
      .given([created(7, 2, 40), created(8, 3, 41)])
      .when({
        streamId: 'instance-7',
        type: 'InstanceDestroyed',
        data: { instanceId: 7 } as InstanceDestroyed['data'],
      })
      .then(
        `SELECT instance_id, owner_id, machine_id, destroyed FROM sync_maintenance.known_instances ORDER BY 1`,
        [
          { instance_id: 7, owner_id: 2, machine_id: 40, destroyed: true },
          { instance_id: 8, owner_id: 3, machine_id: 41, destroyed: false },
        ],
      ));
});
