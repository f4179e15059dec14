import type { Migration, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../instance-lifecycle.read-models';

/**
 * Machines a host agent has served: they never fall back to the simulated host, even right after an
 * instance-lifecycle restart, before their agent is back (their commands then find it offline).
 */
export const agentMachinesMigration: Migration = {
  id: 'agent-0001-agent-machines',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.agent_machines (machine_id INTEGER PRIMARY KEY, first_seen_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
  },
};

export async function rememberAgentMachine(sql: Sql, machineId: number): Promise<void> {
  await sql.execute(
    `INSERT INTO ${SCHEMA}.agent_machines (machine_id) VALUES ($1) ON CONFLICT (machine_id) DO NOTHING`,
    [machineId],
  );
}

export async function isAgentMachine(sql: Sql, machineId: number): Promise<boolean> {
  const rows = await sql.query<{ machine_id: number }>(
    `SELECT machine_id FROM ${SCHEMA}.agent_machines WHERE machine_id = $1`,
    [machineId],
  );
  return rows.length > 0;
}
