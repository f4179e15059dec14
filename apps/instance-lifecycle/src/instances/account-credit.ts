import {
  ApiError,
  type EventEnvelope,
  decimalToMicros,
  ledgerDeltaMicros,
  microsToDecimal,
  microsToDollars,
} from '@rigmarket/contracts';
import type { Projection, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../instance-lifecycle.read-models';

type Queryable = Pick<Sql, 'query'>;

const TABLE = `${SCHEMA}.account_credit`;

export const accountCreditProjection: Projection = {
  name: 'account_credit',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [TABLE],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const delta = ledgerDeltaMicros(envelope);
    if (delta === 0) return;
    await sql.execute(
      `INSERT INTO ${TABLE} (user_id, balance) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET balance = ${TABLE}.balance + EXCLUDED.balance`,
      [(envelope.data as { userId: number }).userId, microsToDecimal(delta)],
    );
  },
};

export const INSUFFICIENT_CREDIT = 'insufficient_credit';

/** The account's balance as instance-lifecycle knows it, in micros (0 for an account the ledger never saw). */
export async function accountBalanceMicros(db: Queryable, userId: number): Promise<number> {
  const rows = await db.query<{ balance: string }>(`SELECT balance FROM ${TABLE} WHERE user_id = $1`, [
    userId,
  ]);
  return rows[0] ? decimalToMicros(rows[0].balance) : 0;
}

/**
 * Renting (PUT /asks/) and starting an instance need a balance above zero: else 402 `insufficient_credit`
 * (docs/instances.md, Credit).
 */
export async function requirePositiveBalance(db: Queryable, userId: number, what: string): Promise<void> {
  const balance = await accountBalanceMicros(db, userId);
  if (balance > 0) return;
  throw new ApiError(
    402,
    INSUFFICIENT_CREDIT,
    `Your balance is $${microsToDollars(balance).toFixed(2)}: ${what} needs credit above $0. Add credit, then try again.`,
    { balance: microsToDollars(balance) },
  );
}
