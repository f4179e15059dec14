import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export interface MachineReport {
  problem: string;
  message: string | null;
  created: number;
  instance_id: number;
}

/** A machine's latest reports, newest first (at most `limit`). */
export async function machineReports(sql: Sql, machineId: number, limit = 100): Promise<MachineReport[]> {
  const rows = await sql.query<MachineReport>(
    `SELECT problem, message, created, instance_id FROM ${SCHEMA}.machine_reports
      WHERE machine_id = $1 ORDER BY created DESC, instance_id DESC LIMIT $2`,
    [machineId, limit],
  );
  return rows.map((r) => ({ ...r, created: Number(r.created), instance_id: Number(r.instance_id) }));
}
