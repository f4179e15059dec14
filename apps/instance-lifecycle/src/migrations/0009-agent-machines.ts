import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Machines a host agent has served: they never fall back to the simulated host, even right after an
 * instance-lifecycle restart, before their agent is back (their commands then find it offline).
 */
export const agentMachines: Migration = {
  id: '0009-agent-machines',
  replaces: 'agent-0001-agent-machines',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.agent_machines (machine_id INTEGER PRIMARY KEY, first_seen_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
  },
};
