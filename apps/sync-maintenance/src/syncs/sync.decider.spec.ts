import type { SyncEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { type SyncRequestData, SyncErrors, syncDecider } from './sync.decider';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(syncDecider);
const request = (jobId: number): SyncRequestData => ({
  instanceId: 9,
  jobId,
  kind: 'copy_direct',
  ownerId: 7,
  srcInstanceId: 8,
  srcPath: '/data/',
  dstPath: '/data/',
  rclone: null,
});
const requested = (jobId: number): SyncEvent => ({
  type: 'SyncRequested',
  data: { ...request(jobId), at: AT },
});
const started = (jobId: number, totalBytes: number | null = 100): SyncEvent => ({
  type: 'SyncStarted',
  data: { instanceId: 9, jobId, totalBytes, at: AT },
});
const progressed = (jobId: number, bytesCopied: number): SyncEvent => ({
  type: 'SyncProgressed',
  data: { instanceId: 9, jobId, bytesCopied, totalBytes: 100, at: AT },
});
const canceled = (jobId: number): SyncEvent => ({
  type: 'SyncCanceled',
  data: { instanceId: 9, jobId, canceledBy: 7, at: AT },
});

describe('remote syncs into an instance', () => {
  describe('When no job ran yet', () => {
    it('a request records the job', () =>
      spec
        .given([])
        .when({ type: 'RequestSync', ...request(1), at: AT })
        .then([requested(1)]));
    it('a request records who carries it out (the host agents, for instances on agent machines)', () =>
      spec
        .given([])
        .when({ type: 'RequestSync', ...request(1), executor: 'agents', at: AT })
        .then([{ type: 'SyncRequested', data: { ...request(1), executor: 'agents', at: AT } }]));
    it('cancel finds nothing to cancel', () =>
      spec
        .given([])
        .when({ type: 'CancelSync', instanceId: 9, requesterId: 7, at: AT })
        .thenNothingHappened());
    it('a report on an unknown job is refused (stop copying)', () =>
      spec
        .given([])
        .when({ type: 'ReportProgress', instanceId: 9, jobId: 1, bytesCopied: 5, totalBytes: 100, at: AT })
        .thenThrows(SyncErrors.notActive));
  });

  describe('When requested', () => {
    it('the executor starts it', () =>
      spec
        .given([requested(1)])
        .when({ type: 'StartSync', instanceId: 9, jobId: 1, totalBytes: 100, at: AT })
        .then([started(1)]));
    it('a second request is refused while it is active', () =>
      spec
        .given([requested(1)])
        .when({ type: 'RequestSync', ...request(2), at: AT })
        .thenThrows(SyncErrors.inProgress));
    it('can be canceled before it starts', () =>
      spec
        .given([requested(1)])
        .when({ type: 'CancelSync', instanceId: 9, requesterId: 7, at: AT })
        .then([canceled(1)]));
    it('can fail (no container, no cloud)', () =>
      spec
        .given([requested(1)])
        .when({ type: 'FailSync', instanceId: 9, jobId: 1, reason: 'no container', at: AT })
        .then([{ type: 'SyncFailed', data: { instanceId: 9, jobId: 1, reason: 'no container', at: AT } }]));
  });

  describe('When running', () => {
    const given = [requested(1), started(1), progressed(1, 40)];
    it('records progress', () =>
      spec
        .given(given)
        .when({ type: 'ReportProgress', instanceId: 9, jobId: 1, bytesCopied: 60, totalBytes: 100, at: AT })
        .then([progressed(1, 60)]));
    it('ignores a report that brings nothing new', () =>
      spec
        .given(given)
        .when({ type: 'ReportProgress', instanceId: 9, jobId: 1, bytesCopied: 40, totalBytes: 100, at: AT })
        .thenNothingHappened());
    it('completes', () =>
      spec
        .given(given)
        .when({ type: 'CompleteSync', instanceId: 9, jobId: 1, bytesCopied: 100, at: AT })
        .then([{ type: 'SyncCompleted', data: { instanceId: 9, jobId: 1, bytesCopied: 100, at: AT } }]));
    it('is canceled by its owner', () =>
      spec
        .given(given)
        .when({ type: 'CancelSync', instanceId: 9, requesterId: 7, at: AT })
        .then([canceled(1)]));
  });

  describe('When canceled', () => {
    const given = [requested(1), started(1), progressed(1, 40), canceled(1)];
    it('refuses further progress of that job, so the executor stops', () =>
      spec
        .given(given)
        .when({ type: 'ReportProgress', instanceId: 9, jobId: 1, bytesCopied: 60, totalBytes: 100, at: AT })
        .thenThrows(SyncErrors.notActive));
    it('cannot complete (the cancel won)', () =>
      spec
        .given(given)
        .when({ type: 'CompleteSync', instanceId: 9, jobId: 1, bytesCopied: 100, at: AT })
        .thenThrows(SyncErrors.notActive));
    it('a late failure report of the aborted copy changes nothing', () =>
      spec
        .given(given)
        .when({ type: 'FailSync', instanceId: 9, jobId: 1, reason: 'aborted', at: AT })
        .thenNothingHappened());
    it('cannot resume: a new start is a new job from zero bytes', () => {
      spec
        .given(given)
        .when({ type: 'RequestSync', ...request(2), at: AT })
        .then([requested(2)]);
      const state = [...given, requested(2)].reduce(syncDecider.evolve, syncDecider.initialState());
      expect(state.current).toMatchObject({ jobId: 2, status: 'requested', bytesCopied: 0 });
    });
    it('the old job cannot start again after a new one was requested', () =>
      spec
        .given([...given, requested(2)])
        .when({ type: 'StartSync', instanceId: 9, jobId: 1, totalBytes: 100, at: AT })
        .thenThrows(SyncErrors.notActive));
  });

  describe('When completed', () => {
    const given = [
      requested(1),
      started(1),
      { type: 'SyncCompleted', data: { instanceId: 9, jobId: 1, bytesCopied: 100, at: AT } } as SyncEvent,
    ];
    it('cancel has nothing to cancel', () =>
      spec
        .given(given)
        .when({ type: 'CancelSync', instanceId: 9, requesterId: 7, at: AT })
        .thenNothingHappened());
    it('a new copy may start', () =>
      spec
        .given(given)
        .when({ type: 'RequestSync', ...request(2), at: AT })
        .then([requested(2)]));
  });
});
