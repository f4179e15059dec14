import { type EventEnvelope, ledgerDeltaMicros, microsToDecimal } from '@rigmarket/contracts';
import { type Projection, type Sql } from '@rigmarket/event-sourcing';

const TABLE = 'identity.user_credit';

export const userCreditProjection: Projection = {
  name: 'user_credit',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [TABLE],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const delta = ledgerDeltaMicros(envelope);
    if (delta === 0) return;
    await sql.execute(
      `INSERT INTO ${TABLE} (user_id, credit) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET credit = ${TABLE}.credit + EXCLUDED.credit`,
      [(envelope.data as { userId: number }).userId, microsToDecimal(delta)],
    );
  },
};

/** Joined into user reads: the credit column, 0 for an account the ledger has not seen. */
export const USER_CREDIT_SQL = `COALESCE((SELECT c.credit::float8 FROM ${TABLE} c WHERE c.user_id = users.user_id), 0) AS credit`;
