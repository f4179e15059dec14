import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import type { SshKeyEvent } from '../../ssh-keys/ssh-key.events';

/** Each account's SSH public keys; a deleted one keeps its row with deleted_at. */
export const sshKeysProjection = defineProjection<SshKeyEvent>({
  name: 'ssh_keys',
  version: 1,
  sources: [{ context: 'identity', streamType: 'ssh_key' }],
  tables: [`${SCHEMA}.ssh_keys`],
  eventTypes: ['SshKeyAdded', 'SshKeyReplaced', 'SshKeyDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'SshKeyAdded':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.ssh_keys (key_id, user_id, public_key, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (key_id) DO NOTHING`,
          [event.data.keyId, event.data.userId, event.data.publicKey, event.data.at],
        );
        return;
      case 'SshKeyReplaced':
        await sql.execute(
          `UPDATE ${SCHEMA}.ssh_keys SET public_key = $2, updated_at = $3 WHERE key_id = $1`,
          [event.data.keyId, event.data.publicKey, event.data.at],
        );
        return;
      case 'SshKeyDeleted':
        await sql.execute(`UPDATE ${SCHEMA}.ssh_keys SET deleted_at = $2 WHERE key_id = $1`, [
          event.data.keyId,
          event.data.at,
        ]);
        return;
    }
  },
});
