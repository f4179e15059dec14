import { decimalToMicros } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const ACCOUNT_CREDIT_TABLE = `${SCHEMA}.account_credit`;
const TABLE = ACCOUNT_CREDIT_TABLE;

type Queryable = Pick<Sql, 'query'>;

/** The account's balance as instance-lifecycle knows it, in micros (0 for an account the ledger never saw). */
export async function accountBalanceMicros(db: Queryable, userId: number): Promise<number> {
  const rows = await db.query<{ balance: string }>(`SELECT balance FROM ${TABLE} WHERE user_id = $1`, [
    userId,
  ]);
  return rows[0] ? decimalToMicros(rows[0].balance) : 0;
}
