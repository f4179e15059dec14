import type { Migration } from '@rigmarket/event-sourcing';

/** Each account's scheduled jobs (read model `scheduled_jobs`, from the private `scheduled_jobs-<userId>` streams). */
export const scheduledJobs: Migration = {
  id: '0021-scheduled-jobs',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE IF NOT EXISTS ${s}.scheduled_job_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.scheduled_jobs (
        job_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        instance_id INTEGER NOT NULL,
        request_method TEXT NOT NULL,
        api_endpoint TEXT NOT NULL,
        request_body JSONB NOT NULL,
        frequency TEXT NOT NULL,
        day_of_the_week INTEGER,
        hour_of_the_day INTEGER,
        start_time TIMESTAMPTZ NOT NULL,
        end_time TIMESTAMPTZ NOT NULL,
        next_run_at TIMESTAMPTZ,
        last_run_at TIMESTAMPTZ,
        last_ok BOOLEAN,
        last_msg TEXT,
        runs INTEGER NOT NULL DEFAULT 0
      )`);
    await sql.execute(`CREATE INDEX scheduled_jobs_user ON ${s}.scheduled_jobs (user_id)`);
    await sql.execute(
      `CREATE INDEX scheduled_jobs_due ON ${s}.scheduled_jobs (next_run_at) WHERE next_run_at IS NOT NULL`,
    );
  },
};
