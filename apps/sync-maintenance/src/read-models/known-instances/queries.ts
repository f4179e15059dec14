import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export interface KnownInstance {
  instanceId: number;
  ownerId: number;
  machineId: number;
}

export async function findInstance(sql: Sql, instanceId: number): Promise<KnownInstance | null> {
  const rows = await sql.query<{ instance_id: number; owner_id: number; machine_id: number }>(
    `SELECT instance_id, owner_id, machine_id FROM ${SCHEMA}.known_instances WHERE instance_id = $1 AND NOT destroyed`,
    [instanceId],
  );
  const row = rows[0];
  return row
    ? {
        instanceId: Number(row.instance_id),
        ownerId: Number(row.owner_id),
        machineId: Number(row.machine_id),
      }
    : null;
}

/** Whether any of the instances runs on a machine a host agent serves (joins the agent_machines read model). */
export async function onAgentMachine(sql: Sql, instanceIds: number[]): Promise<boolean> {
  const rows = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${SCHEMA}.known_instances i JOIN ${SCHEMA}.agent_machines a ON a.machine_id = i.machine_id WHERE i.instance_id = ANY($1::int[])`,
    [instanceIds],
  );
  return Number(rows[0]?.n ?? 0) > 0;
}
