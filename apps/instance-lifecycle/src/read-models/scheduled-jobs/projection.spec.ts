import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { scheduledJobsProjection } from './projection';

const AT = '2026-05-01T12:30:00.000Z';
const created = (userId: number, jobId: number, endpoint: string) => ({
  streamId: `scheduled_jobs-${userId}`,
  type: 'ScheduledJobCreated',
  data: {
    userId,
    jobId,
    instanceId: 9,
    method: 'PUT',
    endpoint,
    body: { price: 0.4 },
    frequency: 'HOURLY',
    dayOfWeek: null,
    hourOfDay: null,
    startTime: AT,
    endTime: '2026-05-08T12:30:00.000Z',
    nextRunAt: '2026-05-01T13:00:00.000Z',
    at: AT,
  },
});
const event = (userId: number, type: string, data: Record<string, unknown>) => ({
  streamId: `scheduled_jobs-${userId}`,
  type,
  data: { userId, at: AT, ...data },
});

describe('scheduled_jobs projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, scheduledJobsProjection);
  afterAll(() => spec.close());

  it("keeps each account's jobs with their next run and last outcome; a deleted one is gone", () =>
    spec
      .given([
        created(2, 1, '/api/v0/instances/bid_price/9/'),
        created(2, 2, '/api/v0/instances/reboot/9/'),
        created(3, 3, '/api/v0/instances/reboot/10/'),
        event(2, 'ScheduledJobRunStarted', {
          jobId: 1,
          dueAt: '2026-05-01T13:00:00.000Z',
          nextRunAt: '2026-05-01T14:00:00.000Z',
        }),
        event(2, 'ScheduledJobRunFinished', {
          jobId: 1,
          dueAt: '2026-05-01T13:00:00.000Z',
          ok: true,
          error: null,
          msg: 'change bid 9: done',
        }),
      ])
      .when(event(2, 'ScheduledJobDeleted', { jobId: 2 }))
      .then(
        `SELECT job_id, user_id, api_endpoint, request_body, next_run_at::text AS next_run_at, last_ok, last_msg, runs
           FROM instance_lifecycle.scheduled_jobs ORDER BY job_id`,
        [
          {
            job_id: 1,
            user_id: 2,
            api_endpoint: '/api/v0/instances/bid_price/9/',
            request_body: { price: 0.4 },
            next_run_at: '2026-05-01 14:00:00+00',
            last_ok: true,
            last_msg: 'change bid 9: done',
            runs: 1,
          },
          {
            job_id: 3,
            user_id: 3,
            api_endpoint: '/api/v0/instances/reboot/10/',
            request_body: { price: 0.4 },
            next_run_at: '2026-05-01 13:00:00+00',
            last_ok: null,
            last_msg: null,
            runs: 0,
          },
        ],
      ));
});
