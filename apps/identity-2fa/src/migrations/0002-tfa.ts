import type { Migration } from '@rigmarket/event-sourcing';

/** Per-account 2FA summary (users/current's tfa_status) and the secret -> user lookup of challenges. */
export const tfa: Migration = {
  id: '0002-tfa',
  replaces: '0003-tfa',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE ${s}.tfa_method_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.tfa_accounts (
        user_id INTEGER PRIMARY KEY,
        enabled BOOLEAN NOT NULL DEFAULT FALSE,
        legacy BOOLEAN NOT NULL DEFAULT FALSE,
        method_count INTEGER NOT NULL DEFAULT 0
      )`);
    // Set-up SMS challenges per phone number (hashed), across accounts: the preauth_phone_cap count.
    await sql.execute(`
      CREATE TABLE ${s}.tfa_phone_setups (
        phone_hash TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        issued_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX tfa_phone_setups_by_phone ON ${s}.tfa_phone_setups (phone_hash, issued_at)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.tfa_secrets (
        secret_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL,
        issued_at TIMESTAMPTZ NOT NULL
      )`);
  },
};
