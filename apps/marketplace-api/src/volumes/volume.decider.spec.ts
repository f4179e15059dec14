import type { VolumeEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { DomainError } from '@rigmarket/contracts';
import { VolumeErrors, cloneSource, volumeDecider } from './volume.decider';

const AT = '2026-05-01T12:00:00.000Z';
const created: VolumeEvent = {
  type: 'VolumeCreated',
  data: { volumeId: 3, ownerId: 2, machineId: 42, sizeGb: 20, name: 'myvol', priceDisk: 0.2, createdAt: AT },
};
const spec = deciderSpec(volumeDecider);
const create = {
  type: 'CreateVolume' as const,
  at: AT,
  volumeId: 3,
  ownerId: 2,
  machineId: 42,
  sizeGb: 20,
  name: 'myvol',
  priceDisk: 0.2,
  freeGb: 100,
};

describe('volume decider', () => {
  it('creates a volume that fits the offer', () => {
    spec.given([]).when(create).then([created]);
  });

  it('refuses a volume larger than the free space, or not a whole number of GB', () => {
    spec
      .given([])
      .when({ ...create, sizeGb: 101 })
      .thenThrows(VolumeErrors.noSpace);
    spec
      .given([])
      .when({ ...create, sizeGb: 1.5 })
      .thenThrows(VolumeErrors.invalidSize);
  });

  it('deletes for its owner only, once', () => {
    spec
      .given([created])
      .when({ type: 'DeleteVolume', at: AT, requesterId: 2 })
      .then([{ type: 'VolumeDeleted', data: { volumeId: 3, machineId: 42, sizeGb: 20, deletedAt: AT } }]);
    spec
      .given([created])
      .when({ type: 'DeleteVolume', at: AT, requesterId: 9 })
      .thenThrows(VolumeErrors.notFound);
    spec
      .given([
        created,
        { type: 'VolumeDeleted', data: { volumeId: 3, machineId: 42, sizeGb: 20, deletedAt: AT } },
      ])
      .when({ type: 'DeleteVolume', at: AT, requesterId: 2 })
      .thenThrows(VolumeErrors.notFound);
  });

  it("creates an instance's volume once, or records its refusal once", () => {
    const forInstance = { ...create, instanceId: 7 };
    const createdFor7: VolumeEvent = { type: 'VolumeCreated', data: { ...created.data, instanceId: 7 } };
    spec.given([]).when(forInstance).then([createdFor7]);
    spec.given([createdFor7]).when(forInstance).thenNothingHappened();
    spec.given([created]).when(forInstance).thenThrows(VolumeErrors.exists);
    const refuse = {
      type: 'RefuseVolume' as const,
      at: AT,
      volumeId: 3,
      ownerId: 2,
      machineId: 42,
      sizeGb: 20,
      instanceId: 7,
      reason: 'taken',
    };
    const refused: VolumeEvent = {
      type: 'VolumeRefused',
      data: { volumeId: 3, instanceId: 7, ownerId: 2, machineId: 42, sizeGb: 20, reason: 'taken', at: AT },
    };
    spec.given([]).when(refuse).then([refused]);
    spec.given([refused]).when(refuse).thenNothingHappened();
    // A refused volume never existed: it cannot be deleted.
    spec
      .given([refused])
      .when({ type: 'DeleteVolume', at: AT, requesterId: 2 })
      .thenThrows(VolumeErrors.notFound);
  });

  describe('clone volume', () => {
    const source = { volumeId: 3, machineId: 42, sizeGb: 20 };
    const clone = { ...create, volumeId: 8, machineId: 43, cloneOf: source };
    const cloned: VolumeEvent = {
      type: 'VolumeCreated',
      data: { ...created.data, volumeId: 8, machineId: 43, cloneOf: { volumeId: 3, machineId: 42 } },
    };

    it("creates the new volume with its origin, at the source's size or larger", () => {
      spec.given([]).when(clone).then([cloned]);
      spec
        .given([])
        .when({ ...clone, sizeGb: 30 })
        .then([{ ...cloned, data: { ...cloned.data, sizeGb: 30 } } as VolumeEvent]);
    });

    it("refuses a size below the source's, or beyond the offer's free space", () => {
      spec
        .given([])
        .when({ ...clone, sizeGb: 19 })
        .thenThrows(VolumeErrors.invalidSize);
      spec
        .given([])
        .when({ ...clone, sizeGb: 101 })
        .thenThrows(VolumeErrors.noSpace);
    });

    it("takes as source only the requester's own live volume", () => {
      const live = volumeDecider.evolve(volumeDecider.initialState(), created);
      expect(cloneSource(live, 2)).toEqual(source);
      const refusedFor = (state: typeof live, requesterId: number) => {
        try {
          cloneSource(state, requesterId);
          return null;
        } catch (error) {
          return error instanceof DomainError ? error.code : String(error);
        }
      };
      expect(refusedFor(live, 9)).toBe(VolumeErrors.notFound);
      expect(refusedFor(volumeDecider.initialState(), 2)).toBe(VolumeErrors.notFound);
      const deleted = volumeDecider.evolve(live, {
        type: 'VolumeDeleted',
        data: { volumeId: 3, machineId: 42, sizeGb: 20, deletedAt: AT },
      });
      expect(refusedFor(deleted, 2)).toBe(VolumeErrors.notFound);
    });
  });
});
