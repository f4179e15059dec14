import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export interface ScheduledJobRow {
  job_id: number;
  user_id: number;
  instance_id: number;
  request_method: string;
  api_endpoint: string;
  request_body: Record<string, unknown> | string;
  frequency: string;
  day_of_the_week: number | null;
  hour_of_the_day: number | null;
  start_time: Date | string;
  end_time: Date | string;
  next_run_at: Date | string | null;
  last_run_at: Date | string | null;
  last_ok: boolean | null;
  last_msg: string | null;
  runs: number;
}

/** The account's scheduled jobs, oldest first. */
export function accountScheduledJobs(sql: Sql, userId: number): Promise<ScheduledJobRow[]> {
  return sql.query<ScheduledJobRow>(
    `SELECT * FROM ${SCHEMA}.scheduled_jobs WHERE user_id = $1 ORDER BY job_id`,
    [userId],
  );
}

/** Jobs due at `now` (their next run at or before it), the oldest due first, at most `limit`. */
export function dueScheduledJobs(sql: Sql, now: Date, limit: number): Promise<ScheduledJobRow[]> {
  return sql.query<ScheduledJobRow>(
    `SELECT * FROM ${SCHEMA}.scheduled_jobs WHERE next_run_at IS NOT NULL AND next_run_at <= $1
      ORDER BY next_run_at, job_id LIMIT $2`,
    [now.toISOString(), limit],
  );
}
