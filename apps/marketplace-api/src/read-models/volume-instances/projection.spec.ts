import type { InstanceCreated, InstanceDestroyed, InstanceVolumeAttached } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT, instanceCreated } from '../testing/events';
import { volumeInstancesProjection } from './projection';

const withVolume = (instanceId: number, volumeId: number) => {
  const event = instanceCreated(instanceId, 7, 1);
  return {
    ...event,
    data: { ...event.data, config: { volume: { volumeId, mountPath: '/data' } } } as InstanceCreated['data'],
  };
};
const attached = (instanceId: number, volumeId: number) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceVolumeAttached' as const,
  data: { instanceId, volumeId, mountPath: '/data', at: AT } satisfies InstanceVolumeAttached['data'],
});
const destroyed = (instanceId: number) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceDestroyed' as const,
  data: { instanceId, renter: 2, machineId: 7, numGpus: 1, at: AT } satisfies InstanceDestroyed['data'],
});

describe('volume_instances projection', () => {
  const spec = projectionSpec(marketplaceContext, volumeInstancesProjection);
  afterAll(() => spec.close());

  it('lists the instances a volume is mounted in, linked at rent or created for the instance, until destroyed', () =>
    spec
      .given([withVolume(20, 5), instanceCreated(21, 7, 1), attached(21, 6), withVolume(22, 5)])
      .when(destroyed(20))
      .then(`SELECT volume_id, instance_id FROM marketplace.volume_instances ORDER BY 1, 2`, [
        { volume_id: 5, instance_id: 22 },
        { volume_id: 6, instance_id: 21 },
      ]));
});
