import type { SyncRequested } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { instanceSyncsProjection } from './projection';

const at = (minute: number) => `2026-05-01T12:0${minute}:00.000Z`;
const requested = (jobId: number, minute: number): SpecEvent<SyncRequested> => ({
  streamId: 'sync-7',
  type: 'SyncRequested',
  data: {
    instanceId: 7,
    jobId,
    kind: 'copy_direct',
    ownerId: 2,
    srcInstanceId: 6,
    srcPath: '/a/',
    dstPath: '/b/',
    rclone: null,
    at: at(minute),
  },
});

describe('instance_syncs projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, instanceSyncsProjection);
  afterAll(() => spec.close());

  it("keeps an instance's latest sync job and its progress; a new job replaces the old one", () =>
    spec
      .given([
        requested(1, 0),
        {
          streamId: 'sync-7',
          type: 'SyncStarted',
          data: { instanceId: 7, jobId: 1, totalBytes: 100, at: at(1) },
        },
        {
          streamId: 'sync-7',
          type: 'SyncFailed',
          data: { instanceId: 7, jobId: 1, reason: 'gone', at: at(2) },
        },
        requested(2, 3),
        {
          streamId: 'sync-7',
          type: 'SyncStarted',
          data: { instanceId: 7, jobId: 2, totalBytes: 50, at: at(4) },
        },
        {
          streamId: 'sync-7',
          type: 'SyncProgressed',
          data: { instanceId: 7, jobId: 2, bytesCopied: 25, totalBytes: 50, at: at(5) },
        },
      ])
      .when({
        streamId: 'sync-7',
        type: 'SyncCompleted',
        data: { instanceId: 7, jobId: 2, bytesCopied: 50, at: at(6) },
      })
      .then(
        `SELECT instance_id, job_id, status, bytes_copied, total_bytes, reason, updated_at::text AS updated_at FROM instance_lifecycle.instance_syncs`,
        [
          {
            instance_id: 7,
            job_id: 2,
            status: 'completed',
            bytes_copied: 50,
            total_bytes: 50,
            reason: null,
            updated_at: '2026-05-01 12:06:00+00',
          },
        ],
      ));

  it('marks a canceled job', () =>
    spec
      .given([requested(3, 0)])
      .when({
        streamId: 'sync-7',
        type: 'SyncCanceled',
        data: { instanceId: 7, jobId: 3, canceledBy: 2, at: at(1) },
      })
      .then(`SELECT job_id, status FROM instance_lifecycle.instance_syncs`, [
        { job_id: 3, status: 'canceled' },
      ]));
});
