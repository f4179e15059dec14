import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export async function machineOwner(sql: Sql, machineId: number): Promise<number | null> {
  const rows = await sql.query<{ owner_id: number }>(
    `SELECT owner_id FROM ${SCHEMA}.known_machines WHERE machine_id = $1`,
    [machineId],
  );
  return rows[0] ? Number(rows[0].owner_id) : null;
}
