import type { Migration } from '@rigmarket/event-sourcing';

/**
 * `vastai set user` and subaccounts: the account's settings (billing address, phone number, balance
 * thresholds) as one JSON object, and the parent account of a subaccount (`vastai show subaccounts`).
 */
export const subaccountsAndSettings: Migration = {
  id: '0010-subaccounts-and-settings',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.users ADD COLUMN parent_id INTEGER`);
    await sql.execute(`ALTER TABLE ${s}.users ADD COLUMN host_only BOOLEAN NOT NULL DEFAULT FALSE`);
    await sql.execute(`ALTER TABLE ${s}.users ADD COLUMN settings JSONB NOT NULL DEFAULT '{}'::jsonb`);
    await sql.execute(
      `CREATE INDEX users_by_parent ON ${s}.users (parent_id, user_id) WHERE parent_id IS NOT NULL`,
    );
  },
};
