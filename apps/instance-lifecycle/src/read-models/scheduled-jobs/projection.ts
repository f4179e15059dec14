import { defineProjection } from '@rigmarket/event-sourcing';
import type { ScheduledJobEvent } from '../../scheduled-jobs/scheduled-job.decider';
import { SCHEMA } from '../../schema';

/** Each account's scheduled jobs: the stored call, its schedule, when it runs next and how its last run went. */
export const scheduledJobsProjection = defineProjection<ScheduledJobEvent>({
  name: 'scheduled_jobs',
  version: 1,
  sources: [{ context: 'instance', streamType: 'scheduled_jobs' }],
  tables: [`${SCHEMA}.scheduled_jobs`],
  eventTypes: [
    'ScheduledJobCreated',
    'ScheduledJobUpdated',
    'ScheduledJobDeleted',
    'ScheduledJobRunStarted',
    'ScheduledJobRunFinished',
  ],
  async apply(sql, event) {
    switch (event.type) {
      case 'ScheduledJobCreated':
      case 'ScheduledJobUpdated': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.scheduled_jobs AS j
             (job_id, user_id, instance_id, request_method, api_endpoint, request_body, frequency, day_of_the_week,
              hour_of_the_day, start_time, end_time, next_run_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12)
           ON CONFLICT (job_id) DO UPDATE SET instance_id = EXCLUDED.instance_id,
             request_method = EXCLUDED.request_method, api_endpoint = EXCLUDED.api_endpoint,
             request_body = EXCLUDED.request_body, frequency = EXCLUDED.frequency,
             day_of_the_week = EXCLUDED.day_of_the_week, hour_of_the_day = EXCLUDED.hour_of_the_day,
             start_time = EXCLUDED.start_time, end_time = EXCLUDED.end_time, next_run_at = EXCLUDED.next_run_at`,
          [
            d.jobId,
            d.userId,
            d.instanceId,
            d.method,
            d.endpoint,
            JSON.stringify(d.body),
            d.frequency,
            d.dayOfWeek,
            d.hourOfDay,
            d.startTime,
            d.endTime,
            d.nextRunAt,
          ],
        );
        return;
      }
      case 'ScheduledJobDeleted':
        await sql.execute(`DELETE FROM ${SCHEMA}.scheduled_jobs WHERE job_id = $1 AND user_id = $2`, [
          event.data.jobId,
          event.data.userId,
        ]);
        return;
      case 'ScheduledJobRunStarted':
        await sql.execute(
          `UPDATE ${SCHEMA}.scheduled_jobs SET next_run_at = $3, last_run_at = $4, runs = runs + 1
            WHERE job_id = $1 AND user_id = $2`,
          [event.data.jobId, event.data.userId, event.data.nextRunAt, event.data.dueAt],
        );
        return;
      case 'ScheduledJobRunFinished':
        await sql.execute(
          `UPDATE ${SCHEMA}.scheduled_jobs SET last_ok = $3, last_msg = $4 WHERE job_id = $1 AND user_id = $2`,
          [event.data.jobId, event.data.userId, event.data.ok, event.data.msg],
        );
        return;
    }
  },
});
