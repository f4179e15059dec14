import type { Sql } from '@rigmarket/event-sourcing';

export async function chargeAlreadyEarned(sql: Sql, schema: string, chargeId: string): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM ${schema}.events WHERE type = 'HostEarned' AND data->>'chargeId' = $1 LIMIT 1`,
    [chargeId],
  );
  return rows.length > 0;
}

/** The recipient's ledger already holds this transfer (its CreditTransferred event id): one index probe (0018). */
export async function transferAlreadyReceived(
  sql: Sql,
  schema: string,
  transferId: string,
): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM ${schema}.events WHERE type = 'CreditReceived' AND data->>'transferId' = $1 LIMIT 1`,
    [transferId],
  );
  return rows.length > 0;
}
