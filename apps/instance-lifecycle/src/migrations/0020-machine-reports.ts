import type { Migration } from '@rigmarket/event-sourcing';

/**
 * read-models/machine-reports: what the platform recorded going wrong with instances on each machine (the
 * host's reports of exited, unknown or offline instances), for `vastai reports`.
 */
export const machineReports: Migration = {
  id: '0020-machine-reports',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.machine_report_instances (
        instance_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.machine_reports (
        instance_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        problem TEXT NOT NULL,
        message TEXT,
        created DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (instance_id, problem)
      )`);
    await sql.execute(
      `CREATE INDEX machine_reports_by_machine ON ${s}.machine_reports (machine_id, created)`,
    );
  },
};
