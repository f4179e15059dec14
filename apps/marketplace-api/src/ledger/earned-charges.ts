import type { Sql } from '@rigmarket/event-sourcing';

export async function chargeAlreadyEarned(sql: Sql, schema: string, chargeId: string): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM ${schema}.events WHERE type = 'HostEarned' AND data->>'chargeId' = $1 LIMIT 1`,
    [chargeId],
  );
  return rows.length > 0;
}
