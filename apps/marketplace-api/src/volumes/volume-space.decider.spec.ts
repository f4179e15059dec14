import { deciderSpec } from '@rigmarket/testing';
import { VolumeErrors } from './volume.decider';
import { type VolumeSpaceEvent, volumeSpaceDecider } from './volume-space.decider';

const AT = '2026-05-01T12:00:00.000Z';
const reserved = (volumeId: number, sizeGb: number): VolumeSpaceEvent => ({
  type: 'VolumeSpaceReserved',
  data: { machineId: 42, volumeId, sizeGb, at: AT },
});
const released = (volumeId: number): VolumeSpaceEvent => ({
  type: 'VolumeSpaceReleased',
  data: { machineId: 42, volumeId, at: AT },
});
const reserve = (volumeId: number, sizeGb: number) => ({
  type: 'ReserveSpace' as const,
  at: AT,
  machineId: 42,
  volumeId,
  sizeGb,
  listedGb: 100,
});
const spec = deciderSpec(volumeSpaceDecider);

describe('volume space of a machine', () => {
  it('reserves space while the listing has room, and refuses what would overbook it', () => {
    spec
      .given([])
      .when(reserve(1, 60))
      .then([reserved(1, 60)]);
    spec
      .given([reserved(1, 60)])
      .when(reserve(2, 40))
      .then([reserved(2, 40)]);
    spec
      .given([reserved(1, 60)])
      .when(reserve(2, 41))
      .thenThrows(VolumeErrors.noSpace);
  });

  it('gives the space back when a volume is deleted; a repeated reservation or release changes nothing', () => {
    spec
      .given([reserved(1, 60), released(1)])
      .when(reserve(2, 100))
      .then([reserved(2, 100)]);
    spec
      .given([reserved(1, 60)])
      .when(reserve(1, 60))
      .thenNothingHappened();
    spec.given([]).when({ type: 'ReleaseSpace', at: AT, machineId: 42, volumeId: 1 }).thenNothingHappened();
  });

  describe("for an instance's volume (volume_info create_new)", () => {
    const forInstance = (volumeId: number, sizeGb: number, listed = true) => ({
      type: 'ReserveSpaceForInstance' as const,
      at: AT,
      machineId: 42,
      volumeId,
      instanceId: 7,
      sizeGb,
      listedGb: 100,
      listed,
    });
    const reservedFor7: VolumeSpaceEvent = {
      type: 'VolumeSpaceReserved',
      data: { machineId: 42, volumeId: 5, sizeGb: 60, at: AT, instanceId: 7 },
    };
    const refused = (reason: string): VolumeSpaceEvent => ({
      type: 'VolumeSpaceRefused',
      data: { machineId: 42, volumeId: 5, instanceId: 7, sizeGb: 60, reason, at: AT },
    });

    it('reserves the space once per instance: a repeated reaction with a new candidate id changes nothing', () => {
      spec.given([]).when(forInstance(5, 60)).then([reservedFor7]);
      spec.given([reservedFor7]).when(forInstance(6, 60)).thenNothingHappened();
      expect(
        volumeSpaceDecider.evolve(volumeSpaceDecider.initialState(), reservedFor7).forInstance[7],
      ).toEqual({ volumeId: 5, refused: null });
    });

    it('records a refusal (no throw) when the space was taken meanwhile or the offer is gone, once', () => {
      spec
        .given([reserved(1, 50)])
        .when(forInstance(5, 60))
        .then([refused('volume offer 42 has 50 GB free now, not 60 (the space was taken meanwhile)')]);
      spec
        .given([])
        .when(forInstance(5, 60, false))
        .then([refused('volume offer 42 is no longer listed')]);
      spec
        .given([refused('volume offer 42 is no longer listed')])
        .when(forInstance(6, 60))
        .thenNothingHappened();
    });
  });
});
