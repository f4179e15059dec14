import type { SyncEvent } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { syncJobsProjection } from './projection';

const t = (minute: number) => `2026-05-01T12:0${minute}:00.000Z`;
const job = (jobId: number, executor?: 'agents'): SpecEvent<SyncEvent> => ({
  streamId: 'sync-7',
  type: 'SyncRequested',
  data: {
    instanceId: 7,
    jobId,
    kind: 'copy_direct',
    ownerId: 2,
    srcInstanceId: 6,
    srcPath: '/data/',
    dstPath: '/restore/',
    rclone: null,
    ...(executor ? { executor } : {}),
    at: t(0),
  },
});

describe('sync_jobs projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, syncJobsProjection);
  afterAll(() => spec.close());

  it('follows a job from requested to completed, and another to canceled', () =>
    spec
      .given([
        job(1),
        {
          streamId: 'sync-7',
          type: 'SyncStarted',
          data: { instanceId: 7, jobId: 1, totalBytes: 100, at: t(1) },
        },
        {
          streamId: 'sync-7',
          type: 'SyncProgressed',
          data: { instanceId: 7, jobId: 1, bytesCopied: 40, totalBytes: 100, at: t(2) },
        },
        {
          streamId: 'sync-7',
          type: 'SyncCompleted',
          data: { instanceId: 7, jobId: 1, bytesCopied: 100, at: t(3) },
        },
        job(2, 'agents'),
      ])
      .when({
        streamId: 'sync-7',
        type: 'SyncCanceled',
        data: { instanceId: 7, jobId: 2, canceledBy: 2, at: t(4) },
      })
      .then(
        `SELECT job_id, status, bytes_copied, total_bytes, executor, updated_at::text AS updated_at FROM sync_maintenance.sync_jobs ORDER BY 1`,
        [
          {
            job_id: 1,
            status: 'completed',
            bytes_copied: 100,
            total_bytes: 100,
            executor: 'platform',
            updated_at: '2026-05-01 12:03:00+00',
          },
          {
            job_id: 2,
            status: 'canceled',
            bytes_copied: 0,
            total_bytes: null,
            executor: 'agents',
            updated_at: '2026-05-01 12:04:00+00',
          },
        ],
      ));

  it('records why a job failed', () =>
    spec
      .given([job(3)])
      .when({
        streamId: 'sync-7',
        type: 'SyncFailed',
        data: { instanceId: 7, jobId: 3, reason: 'no space', at: t(5) },
      })
      .then(`SELECT job_id, status, reason FROM sync_maintenance.sync_jobs`, [
        { job_id: 3, status: 'failed', reason: 'no space' },
      ]));
});
