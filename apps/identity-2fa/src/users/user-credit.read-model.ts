import type { AccountCharged, CreditGranted, EventEnvelope } from '@rigmarket/contracts';
import type { Migration, Projection, Sql } from '@rigmarket/event-sourcing';

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

export const userCreditProjection: Projection = {
  name: 'user_credit',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [TABLE],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as CreditGranted | AccountCharged;
    const delta =
      event.type === 'CreditGranted'
        ? event.data.amount
        : event.type === 'AccountCharged'
          ? -event.data.amount
          : 0;
    if (delta === 0) return;
    await sql.execute(
      `INSERT INTO ${TABLE} (user_id, credit) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET credit = ${TABLE}.credit + EXCLUDED.credit`,
      [event.data.userId, delta],
    );
  },
};

/** Joined into user reads: the credit column, 0 for an account the ledger has not seen. */
export const USER_CREDIT_SQL = `COALESCE((SELECT c.credit::float8 FROM ${TABLE} c WHERE c.user_id = users.user_id), 0) AS credit`;
