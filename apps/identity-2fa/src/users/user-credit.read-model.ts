import { type EventEnvelope, ledgerDeltaMicros, microsToDecimal } from '@rigmarket/contracts';
import { type Migration, type Projection, type Sql, replayProjection } from '@rigmarket/event-sourcing';

const TABLE = 'identity.user_credit';

/** The balance shown as `credit` on the current user, projected from marketplace's billing ledger. */
export const userCreditMigration: Migration = {
  id: '0004-user-credit',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.user_credit (user_id INTEGER PRIMARY KEY, credit NUMERIC(18, 6) NOT NULL DEFAULT 0)`,
    );
  },
};

/**
 * The credit column was summed from float dollars and left out hosts' earnings, so it disagreed with
 * marketplace.balances; it is now NUMERIC(20, 6) summed from the ledger's integer micros by the same rule
 * (ledgerDeltaMicros) as marketplace's balances, and replayed from the ledger once.
 */
export const userCreditExactMigration: Migration = {
  id: '0005-user-credit-exact-money',
  async up(sql, s) {
    await sql.execute(`DELETE FROM ${s}.user_credit`);
    await sql.execute(`ALTER TABLE ${s}.user_credit ALTER COLUMN credit TYPE NUMERIC(20, 6)`);
    await replayProjection(sql, s, userCreditProjection);
  },
};

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
