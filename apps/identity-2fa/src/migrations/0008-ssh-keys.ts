import type { Migration } from '@rigmarket/event-sourcing';

/** Accounts' SSH public keys (`vastai create|show|update|delete ssh-key`). */
export const sshKeys: Migration = {
  id: '0008-ssh-keys',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE ${s}.ssh_key_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.ssh_keys (
        key_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        public_key TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        deleted_at TIMESTAMPTZ
      )`);
    await sql.execute(
      `CREATE INDEX ssh_keys_by_user ON ${s}.ssh_keys (user_id, key_id) WHERE deleted_at IS NULL`,
    );
  },
};
