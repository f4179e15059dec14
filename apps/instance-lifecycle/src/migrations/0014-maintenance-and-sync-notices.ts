import type { Migration } from '@rigmarket/event-sourcing';

export const maintenanceAndSyncNotices: Migration = {
  id: '0014-maintenance-and-sync-notices',
  replaces: 'sync-0001-maintenance-and-sync-notices',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.machine_maintenance (
        window_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION NOT NULL,
        duration_hours DOUBLE PRECISION NOT NULL,
        category TEXT NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX machine_maintenance_by_machine ON ${s}.machine_maintenance (machine_id, start_time)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.instance_syncs (
        instance_id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        src_instance_id INTEGER,
        transfer TEXT,
        status TEXT NOT NULL,
        bytes_copied DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_bytes DOUBLE PRECISION,
        reason TEXT,
        updated_at TIMESTAMPTZ NOT NULL
      )`);
  },
};
