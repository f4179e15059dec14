import type { VolumeCopyEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { volumeCopyDecider } from './volume-copy.decider';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(volumeCopyDecider);
const clone = { volumeId: 31, at: AT };
const started: VolumeCopyEvent = {
  type: 'VolumeCopyStarted',
  data: { volumeId: 31, srcVolumeId: 30, at: AT },
};
const completed: VolumeCopyEvent = {
  type: 'VolumeCopyCompleted',
  data: { volumeId: 31, bytesCopied: 4096, at: AT },
};
const failed = (reason: string): VolumeCopyEvent => ({
  type: 'VolumeCopyFailed',
  data: { volumeId: 31, reason, at: AT },
});

describe("a cloned volume's data copied by the host agents", () => {
  it('starts once, when the source agent has opened the volume', () => {
    spec
      .given([])
      .when({ ...clone, type: 'StartVolumeCopy', srcVolumeId: 30 })
      .then([started]);
    spec
      .given([started])
      .when({ ...clone, type: 'StartVolumeCopy', srcVolumeId: 30 })
      .thenNothingHappened();
  });

  it('completes a running copy with the bytes the destination extracted, and only a running one', () => {
    spec
      .given([started])
      .when({ ...clone, type: 'CompleteVolumeCopy', bytesCopied: 4096 })
      .then([completed]);
    spec
      .given([])
      .when({ ...clone, type: 'CompleteVolumeCopy', bytesCopied: 4096 })
      .thenNothingHappened();
  });

  it('fails before or during the transfer, with the reason shown to the renter', () => {
    const reason = 'The host agent of machine 7 (source volume 30) is not connected';
    spec
      .given([])
      .when({ ...clone, type: 'FailVolumeCopy', reason })
      .then([failed(reason)]);
    spec
      .given([started])
      .when({ ...clone, type: 'FailVolumeCopy', reason: 'disk full' })
      .then([failed('disk full')]);
  });

  it('ends once: a report after the end changes nothing', () => {
    spec
      .given([started, completed])
      .when({ ...clone, type: 'FailVolumeCopy', reason: 'late' })
      .thenNothingHappened();
    spec
      .given([started, failed('agent gone')])
      .when({ ...clone, type: 'CompleteVolumeCopy', bytesCopied: 4096 })
      .thenNothingHappened();
    spec
      .given([failed('agent gone')])
      .when({ ...clone, type: 'StartVolumeCopy', srcVolumeId: 30 })
      .thenNothingHappened();
  });
});
