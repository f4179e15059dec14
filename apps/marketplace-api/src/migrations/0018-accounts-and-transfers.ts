import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Credit transfers (`vastai transfer credit`): `accounts` is the directory that names a recipient by e-mail
 * or id (from identity's UserRegistered); the unique index makes a transfer arrive once on the recipient's
 * ledger (the credit-transfers reactor runs at least once), as 0011 does for earnings.
 */
export const accountsAndTransfers: Migration = {
  id: '0018-accounts-and-transfers',
  async up(sql, s) {
    await sql.execute(`CREATE TABLE ${s}.accounts (user_id INTEGER PRIMARY KEY, email TEXT NOT NULL)`);
    await sql.execute(`CREATE INDEX accounts_by_email ON ${s}.accounts (lower(email))`);
    await sql.execute(
      `CREATE UNIQUE INDEX ${s}_events_received_transfer ON ${s}.events ((data->>'transferId')) WHERE type = 'CreditReceived'`,
    );
  },
};
