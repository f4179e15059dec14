import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { volumeClonesProjection } from './projection';

const created = (volumeId: number, cloneOf?: { volumeId: number; machineId: number }) => ({
  streamId: `volume-${volumeId}`,
  type: 'VolumeCreated' as const,
  data: {
    volumeId,
    ownerId: 2,
    machineId: 8,
    sizeGb: 20,
    name: null,
    priceDisk: 0.1,
    createdAt: AT,
    ...(cloneOf ? { cloneOf } : {}),
  },
});
const copy = (volumeId: number) => `volumecopy-${volumeId}`;
const started = (volumeId: number) => ({
  streamId: copy(volumeId),
  type: 'VolumeCopyStarted' as const,
  data: { volumeId, srcVolumeId: 1, at: AT },
});
const ROWS = `SELECT volume_id, source_volume_id, status, status_msg, bytes_copied FROM marketplace.volume_clones ORDER BY volume_id`;

describe('volume_clones projection', () => {
  const spec = projectionSpec(marketplaceContext, volumeClonesProjection);
  afterAll(() => spec.close());

  it('shows a clone cloning from its creation, online once its copy completed; plain volumes have no row', () =>
    spec
      .given([created(1), created(2, { volumeId: 1, machineId: 7 }), started(2)])
      .when({
        streamId: copy(2),
        type: 'VolumeCopyCompleted',
        data: { volumeId: 2, bytesCopied: 10240, at: AT },
      })
      .then(ROWS, [
        { volume_id: 2, source_volume_id: 1, status: 'online', status_msg: null, bytes_copied: 10240 },
      ]));

  it("shows a failed copy's reason", () =>
    spec
      .given([created(3, { volumeId: 1, machineId: 7 })])
      .when({
        streamId: copy(3),
        type: 'VolumeCopyFailed',
        data: { volumeId: 3, reason: 'Clone of volume 1 failed: agent gone', at: AT },
      })
      .then(ROWS, [
        {
          volume_id: 3,
          source_volume_id: 1,
          status: 'failed',
          status_msg: 'Clone of volume 1 failed: agent gone',
          bytes_copied: null,
        },
      ]));

  it("ends the same when instance-lifecycle's outcome is applied before marketplace's VolumeCreated (a rebuild's order)", () =>
    spec
      .given([
        started(4),
        { streamId: copy(4), type: 'VolumeCopyCompleted', data: { volumeId: 4, bytesCopied: 512, at: AT } },
      ])
      .when(created(4, { volumeId: 1, machineId: 7 }))
      .then(ROWS, [
        { volume_id: 4, source_volume_id: 1, status: 'online', status_msg: null, bytes_copied: 512 },
      ]));
});
