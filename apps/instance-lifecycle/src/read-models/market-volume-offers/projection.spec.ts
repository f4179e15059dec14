import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { marketVolumeOffersProjection } from './projection';

describe('market_volume_offers projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, marketVolumeOffersProjection);
  afterAll(() => spec.close());

  it('sums the space used on a machine whether the volume or the listing arrives first', () =>
    spec
      .given([
        {
          streamId: 'volume-1',
          type: 'VolumeCreated',
          data: {
            volumeId: 1,
            ownerId: 2,
            machineId: 7,
            sizeGb: 30,
            name: null,
            priceDisk: 0.1,
            createdAt: 'x',
          },
        },
        {
          streamId: 'machine-7',
          type: 'VolumeSpaceListed',
          data: { machineId: 7, ownerId: 3, sizeGb: 100, priceDisk: 0.1, endDate: null, listedAt: 'x' },
        },
        {
          streamId: 'volume-2',
          type: 'VolumeCreated',
          data: {
            volumeId: 2,
            ownerId: 2,
            machineId: 7,
            sizeGb: 20,
            name: null,
            priceDisk: 0.1,
            createdAt: 'x',
          },
        },
        {
          streamId: 'volume-1',
          type: 'VolumeDeleted',
          data: { volumeId: 1, machineId: 7, sizeGb: 30, deletedAt: 'x' },
        },
      ])
      .when({ streamId: 'machine-8', type: 'VolumeSpaceUnlisted', data: { machineId: 8, unlistedAt: 'x' } })
      .then(
        `SELECT machine_id, size_gb, used_gb, listed FROM instance_lifecycle.market_volume_offers ORDER BY 1`,
        [
          { machine_id: 7, size_gb: 100, used_gb: 20, listed: true },
          { machine_id: 8, size_gb: 0, used_gb: 0, listed: false },
        ],
      ));
});
