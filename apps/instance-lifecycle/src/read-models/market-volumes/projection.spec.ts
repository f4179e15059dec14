import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { marketVolumesProjection } from './projection';

describe('market_volumes projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, marketVolumesProjection);
  afterAll(() => spec.close());

  it("knows each volume's owner and machine, and which are deleted", () =>
    spec
      .given([
        {
          streamId: 'volume-1',
          type: 'VolumeCreated',
          data: {
            volumeId: 1,
            ownerId: 2,
            machineId: 7,
            sizeGb: 10,
            name: 'a',
            priceDisk: 0.1,
            createdAt: 'x',
          },
        },
        {
          streamId: 'volume-2',
          type: 'VolumeCreated',
          data: {
            volumeId: 2,
            ownerId: 3,
            machineId: 8,
            sizeGb: 20,
            name: null,
            priceDisk: 0.1,
            createdAt: 'x',
          },
        },
      ])
      .when({
        streamId: 'volume-1',
        type: 'VolumeDeleted',
        data: { volumeId: 1, machineId: 7, sizeGb: 10, deletedAt: 'x' },
      })
      .then(
        `SELECT volume_id, owner_id, machine_id, size_gb, name, deleted FROM instance_lifecycle.market_volumes ORDER BY 1`,
        [
          { volume_id: 1, owner_id: 2, machine_id: 7, size_gb: 10, name: 'a', deleted: true },
          { volume_id: 2, owner_id: 3, machine_id: 8, size_gb: 20, name: null, deleted: false },
        ],
      ));
});
