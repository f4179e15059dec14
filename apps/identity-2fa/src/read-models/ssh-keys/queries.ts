import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const SSH_KEYS_TABLE = `${SCHEMA}.ssh_keys`;

/** users/current's `ssh_key`: the account's newest live key (null without one). */
export const CURRENT_SSH_KEY_SQL = `(SELECT k.public_key FROM ${SSH_KEYS_TABLE} k
  WHERE k.user_id = ${SCHEMA}.users.user_id AND k.deleted_at IS NULL ORDER BY k.key_id DESC LIMIT 1) AS current_ssh_key`;

export interface SshKeyView {
  id: number;
  user_id: number;
  ssh_key: string;
  /** The same text, under the name other clients read. */
  public_key: string;
  created_at: number;
}

interface SshKeyRow {
  key_id: number;
  user_id: number;
  public_key: string;
  created_at: string | Date;
}

const view = (row: SshKeyRow): SshKeyView => ({
  id: Number(row.key_id),
  user_id: Number(row.user_id),
  ssh_key: row.public_key,
  public_key: row.public_key,
  created_at: new Date(row.created_at).getTime() / 1000,
});

export async function listSshKeys(db: Sql, userId: number): Promise<SshKeyView[]> {
  const rows = await db.query<SshKeyRow>(
    `SELECT key_id, user_id, public_key, created_at FROM ${SSH_KEYS_TABLE} WHERE user_id = $1 AND deleted_at IS NULL ORDER BY key_id`,
    [userId],
  );
  return rows.map(view);
}

export async function findSshKey(db: Sql, userId: number, keyId: number): Promise<SshKeyView | null> {
  const rows = await db.query<SshKeyRow>(
    `SELECT key_id, user_id, public_key, created_at FROM ${SSH_KEYS_TABLE} WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL`,
    [keyId, userId],
  );
  return rows[0] ? view(rows[0]) : null;
}
