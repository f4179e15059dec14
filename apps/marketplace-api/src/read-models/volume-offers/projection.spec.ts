import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { volumeOffersProjection } from './projection';

describe('volume_offers projection (volume space and volumes)', () => {
  const spec = projectionSpec(marketplaceContext, volumeOffersProjection);
  afterAll(() => spec.close());

  it("tracks a machine's listed space, the volumes on it and the space they use", () =>
    spec
      .given([
        {
          streamId: 'machine-7',
          type: 'VolumeSpaceListed',
          data: { machineId: 7, ownerId: 3, sizeGb: 500, priceDisk: 0.1, endDate: null, listedAt: AT },
        },
        {
          streamId: 'volume-1',
          type: 'VolumeCreated',
          data: {
            volumeId: 1,
            ownerId: 2,
            machineId: 7,
            sizeGb: 100,
            name: 'data',
            priceDisk: 0.1,
            createdAt: AT,
          },
        },
        {
          streamId: 'volume-2',
          type: 'VolumeCreated',
          data: {
            volumeId: 2,
            ownerId: 2,
            machineId: 7,
            sizeGb: 50,
            name: null,
            priceDisk: 0.1,
            createdAt: AT,
          },
        },
        {
          streamId: 'volume-2',
          type: 'VolumeDeleted',
          data: { volumeId: 2, machineId: 7, sizeGb: 50, deletedAt: AT },
        },
      ])
      .when({ streamId: 'machine-7', type: 'VolumeSpaceUnlisted', data: { machineId: 7, unlistedAt: AT } })
      .then(
        `SELECT o.machine_id, o.size_gb, o.used_gb, o.listed,
                (SELECT json_agg(v.volume_id ORDER BY v.volume_id) FROM marketplace.volumes v WHERE v.machine_id = o.machine_id AND v.deleted_at IS NULL) AS live
           FROM marketplace.volume_offers o`,
        [{ machine_id: 7, size_gb: 500, used_gb: 100, listed: false, live: [1] }],
      ));
});
