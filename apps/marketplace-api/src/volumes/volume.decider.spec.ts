import type { VolumeEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { VolumeErrors, volumeDecider } from './volume.decider';

const AT = '2026-05-01T12:00:00.000Z';
const created: VolumeEvent = {
  type: 'VolumeCreated',
  data: { volumeId: 3, ownerId: 2, machineId: 42, sizeGb: 20, name: 'myvol', priceDisk: 0.2, createdAt: AT },
};
const spec = deciderSpec(volumeDecider);
const create = { type: 'CreateVolume' as const, at: AT, volumeId: 3, ownerId: 2, machineId: 42, sizeGb: 20, name: 'myvol', priceDisk: 0.2, freeGb: 100 };

describe('volume decider', () => {
  it('creates a volume that fits the offer', () => {
    spec.given([]).when(create).then([created]);
  });

  it('refuses a volume larger than the free space, or not a whole number of GB', () => {
    spec.given([]).when({ ...create, sizeGb: 101 }).thenThrows(VolumeErrors.noSpace);
    spec.given([]).when({ ...create, sizeGb: 1.5 }).thenThrows(VolumeErrors.invalidSize);
  });

  it('deletes for its owner only, once', () => {
    spec.given([created]).when({ type: 'DeleteVolume', at: AT, requesterId: 2 }).then([{ type: 'VolumeDeleted', data: { volumeId: 3, machineId: 42, sizeGb: 20, deletedAt: AT } }]);
    spec.given([created]).when({ type: 'DeleteVolume', at: AT, requesterId: 9 }).thenThrows(VolumeErrors.notFound);
    spec
      .given([created, { type: 'VolumeDeleted', data: { volumeId: 3, machineId: 42, sizeGb: 20, deletedAt: AT } }])
      .when({ type: 'DeleteVolume', at: AT, requesterId: 2 })
      .thenThrows(VolumeErrors.notFound);
  });
});
