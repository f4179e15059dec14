import { deciderSpec } from '@rigmarket/testing';
import { VolumeErrors } from './volume.decider';
import { type VolumeSpaceEvent, volumeSpaceDecider } from './volume-space.decider';

const AT = '2026-05-01T12:00:00.000Z';
const reserved = (volumeId: number, sizeGb: number): VolumeSpaceEvent => ({ type: 'VolumeSpaceReserved', data: { machineId: 42, volumeId, sizeGb, at: AT } });
const released = (volumeId: number): VolumeSpaceEvent => ({ type: 'VolumeSpaceReleased', data: { machineId: 42, volumeId, at: AT } });
const reserve = (volumeId: number, sizeGb: number) => ({ type: 'ReserveSpace' as const, at: AT, machineId: 42, volumeId, sizeGb, listedGb: 100 });
const spec = deciderSpec(volumeSpaceDecider);

describe('volume space of a machine', () => {
  it('reserves space while the listing has room, and refuses what would overbook it', () => {
    spec.given([]).when(reserve(1, 60)).then([reserved(1, 60)]);
    spec.given([reserved(1, 60)]).when(reserve(2, 40)).then([reserved(2, 40)]);
    spec.given([reserved(1, 60)]).when(reserve(2, 41)).thenThrows(VolumeErrors.noSpace);
  });

  it('gives the space back when a volume is deleted; a repeated reservation or release changes nothing', () => {
    spec.given([reserved(1, 60), released(1)]).when(reserve(2, 100)).then([reserved(2, 100)]);
    spec.given([reserved(1, 60)]).when(reserve(1, 60)).thenNothingHappened();
    spec.given([]).when({ type: 'ReleaseSpace', at: AT, machineId: 42, volumeId: 1 }).thenNothingHappened();
  });
});
