import type { Migration } from '@rigmarket/event-sourcing';

/**
 * What instance-lifecycle knows of each account's balance: marketplace's ledger events over the transport,
 * summed by the ledger's own rule (ledgerDeltaMicros) into NUMERIC(20, 6) dollars. Eventually consistent:
 * a grant may take a moment to open renting, a charge a moment to close it.
 */
export const accountCredit: Migration = {
  id: '0008-account-credit',
  replaces: '0009-account-credit',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.account_credit (user_id INTEGER PRIMARY KEY, balance NUMERIC(20, 6) NOT NULL DEFAULT 0)`,
    );
  },
};
