import type { Migration } from '@rigmarket/event-sourcing';

/**
 * read-models/instance-backups: the backups the platform took of instances (`vastai show instance-backups`)
 * and the SHA-256 of their download tokens, from the private `instance_backup-<id>` streams.
 */
export const instanceBackups: Migration = {
  id: '0022-instance-backups',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE IF NOT EXISTS ${s}.instance_backup_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.instance_backups (
        backup_id INTEGER PRIMARY KEY,
        contract_id INTEGER NOT NULL,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        info TEXT NOT NULL,
        files JSONB NOT NULL DEFAULT '[]',
        bytes BIGINT NOT NULL DEFAULT 0,
        requested_at TIMESTAMPTZ NOT NULL,
        ended_at TIMESTAMPTZ
      )`);
    await sql.execute(
      `CREATE INDEX instance_backups_owner ON ${s}.instance_backups (owner_id, contract_id, backup_id)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.instance_backup_tokens (
        token_hash TEXT PRIMARY KEY,
        backup_id INTEGER NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX instance_backup_tokens_backup ON ${s}.instance_backup_tokens (backup_id)`,
    );
  },
};
