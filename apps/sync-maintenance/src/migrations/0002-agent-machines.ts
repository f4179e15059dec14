import type { Migration } from '@rigmarket/event-sourcing';

/** Machines served by a host agent (instance-lifecycle's HostAgentEnrolled), and which executor ran each job. */
export const agentMachines: Migration = {
  id: '0002-agent-machines',
  replaces: '0003-agent-machines',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.agent_machines (machine_id INTEGER PRIMARY KEY, driver TEXT NOT NULL)`,
    );
    await sql.execute(`ALTER TABLE ${s}.sync_jobs ADD COLUMN executor TEXT NOT NULL DEFAULT 'platform'`);
  },
};
