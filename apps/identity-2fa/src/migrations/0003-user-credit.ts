import type { Migration } from '@rigmarket/event-sourcing';

/** The balance shown as `credit` on the current user, projected from marketplace's billing ledger. */
export const userCredit: Migration = {
  id: '0003-user-credit',
  replaces: '0004-user-credit',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.user_credit (user_id INTEGER PRIMARY KEY, credit NUMERIC(18, 6) NOT NULL DEFAULT 0)`,
    );
  },
};
