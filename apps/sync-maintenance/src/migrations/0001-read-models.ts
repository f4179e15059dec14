import type { Migration } from '@rigmarket/event-sourcing';

/**
 * What sync-maintenance knows of the others (machine owners from marketplace, instance owners from
 * instance-lifecycle, over the transport) and its own read models (windows, sync jobs; inline).
 */
export const readModels: Migration = {
  id: '0001-read-models',
  replaces: '0002-sync-maintenance-read-models',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.known_machines (machine_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.known_instances (
        instance_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        destroyed BOOLEAN NOT NULL DEFAULT FALSE
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.maintenance_windows (
        window_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        owner_id INTEGER NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION NOT NULL,
        duration_hours DOUBLE PRECISION NOT NULL,
        category TEXT NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX maintenance_windows_by_machine ON ${s}.maintenance_windows (machine_id, start_time)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.sync_jobs (
        job_id INTEGER PRIMARY KEY,
        instance_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        owner_id INTEGER NOT NULL,
        src_instance_id INTEGER,
        src_path TEXT NOT NULL,
        dst_path TEXT NOT NULL,
        rclone JSONB,
        status TEXT NOT NULL,
        bytes_copied DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_bytes DOUBLE PRECISION,
        reason TEXT,
        requested_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(`CREATE INDEX sync_jobs_by_instance ON ${s}.sync_jobs (instance_id, job_id)`);
    await sql.execute(`CREATE SEQUENCE ${s}.sync_job_ids START 1`);
    await sql.execute(`CREATE SEQUENCE ${s}.maintenance_window_ids START 1`);
  },
};
