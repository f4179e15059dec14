import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';

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
