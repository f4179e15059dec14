import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** The account a transfer names: a numeric id, or an e-mail (any case); null when there is none. */
export async function findAccount(sql: Sql, recipient: string): Promise<number | null> {
  const byId = /^\d{1,9}$/.test(recipient);
  const rows = await sql.query<{ user_id: number }>(
    byId
      ? `SELECT user_id FROM ${SCHEMA}.accounts WHERE user_id = $1`
      : `SELECT user_id FROM ${SCHEMA}.accounts WHERE lower(email) = lower($1) ORDER BY user_id LIMIT 1`,
    [byId ? Number(recipient) : recipient],
  );
  return rows[0] ? Number(rows[0].user_id) : null;
}
