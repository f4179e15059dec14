import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { instanceCreated } from '../testing/events';
import { instanceAllocationsProjection } from './projection';

describe('instance_allocations projection', () => {
  const spec = projectionSpec(marketplaceContext, instanceAllocationsProjection);
  afterAll(() => spec.close());

  it('holds GPUs per live instance, lets an outbid one go and takes them again when it is started', () =>
    spec
      .given([
        instanceCreated(9, 7, 2),
        instanceCreated(10, 7, 1),
        instanceCreated(11, 7, 1),
        { streamId: 'instance-10', type: 'InstanceOutbid', data: { instanceId: 10, machineId: 7 } as never },
        { streamId: 'instance-11', type: 'InstanceOutbid', data: { instanceId: 11, machineId: 7 } as never },
        { streamId: 'instance-9', type: 'InstanceDestroyed', data: { instanceId: 9, machineId: 7 } as never },
      ])
      .when({
        streamId: 'instance-11',
        type: 'InstanceIntentChanged',
        data: { instanceId: 11, intendedStatus: 'running' } as never,
      })
      .then(
        `SELECT instance_id, machine_id, num_gpus, held FROM marketplace.instance_allocations ORDER BY 1`,
        [
          { instance_id: 10, machine_id: 7, num_gpus: 1, held: false },
          { instance_id: 11, machine_id: 7, num_gpus: 1, held: true },
        ],
      ));
});
