import type { Sql } from '@rigmarket/event-sourcing';

export async function chargeAlreadyEarned(sql: Sql, schema: string, chargeId: string): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM ${schema}.events WHERE type = 'HostEarned' AND data->>'chargeId' = $1 LIMIT 1`,
    [chargeId],
  );
  return rows.length > 0;
}

/** Which of these charges the hosts' ledgers already hold a HostEarned of: one index probe each (0018). */
export async function chargesAlreadyEarned(sql: Sql, schema: string, chargeIds: string[]): Promise<string[]> {
  if (chargeIds.length === 0) return [];
  const rows = await sql.query<{ charge_id: string }>(
    `SELECT data->>'chargeId' AS charge_id FROM ${schema}.events
      WHERE type = 'HostEarned' AND data->>'chargeId' = ANY($1::text[])`,
    [chargeIds],
  );
  return rows.map((r) => r.charge_id);
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
