import { defineProjection } from '@rigmarket/event-sourcing';
import type { InstanceBackupEvent } from '../../backups/instance-backup.decider';
import { SCHEMA } from '../../schema';

/**
 * The backups the platform took of instances (`GET /api/v0/instance_backups/`), one row per backup until
 * retention deletes it, and the SHA-256 of each download token handed out (a token's row goes with its
 * backup, and the expired tokens of a backup are dropped when a new one is recorded).
 */
export const instanceBackupsProjection = defineProjection<InstanceBackupEvent>({
  name: 'instance_backups',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance_backup' }],
  tables: [`${SCHEMA}.instance_backups`, `${SCHEMA}.instance_backup_tokens`],
  eventTypes: [
    'InstanceBackupRequested',
    'InstanceBackupStored',
    'InstanceBackupFailed',
    'InstanceBackupDownloadAuthorized',
    'InstanceBackupDeleted',
  ],
  async apply(sql, event) {
    switch (event.type) {
      case 'InstanceBackupRequested': {
        const { backupId, contractId, ownerId, machineId, kind, info, at } = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.instance_backups
             (backup_id, contract_id, owner_id, machine_id, kind, status, info, requested_at)
           VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7) ON CONFLICT (backup_id) DO NOTHING`,
          [backupId, contractId, ownerId, machineId, kind, info, at],
        );
        return;
      }
      case 'InstanceBackupStored': {
        const { backupId, files, at } = event.data;
        await sql.execute(
          `UPDATE ${SCHEMA}.instance_backups SET status = 'success', files = $2, bytes = $3, ended_at = $4
            WHERE backup_id = $1`,
          [backupId, JSON.stringify(files), files.reduce((sum, f) => sum + f.size, 0), at],
        );
        return;
      }
      case 'InstanceBackupFailed':
        await sql.execute(
          `UPDATE ${SCHEMA}.instance_backups SET status = 'error', info = $2, ended_at = $3 WHERE backup_id = $1`,
          [event.data.backupId, event.data.reason, event.data.at],
        );
        return;
      case 'InstanceBackupDownloadAuthorized': {
        const { backupId, tokenHash, expiresAt, at } = event.data;
        await sql.execute(
          `DELETE FROM ${SCHEMA}.instance_backup_tokens WHERE backup_id = $1 AND expires_at <= $2`,
          [backupId, at],
        );
        await sql.execute(
          `INSERT INTO ${SCHEMA}.instance_backup_tokens (token_hash, backup_id, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (token_hash) DO NOTHING`,
          [tokenHash, backupId, expiresAt],
        );
        return;
      }
      case 'InstanceBackupDeleted':
        await sql.execute(`DELETE FROM ${SCHEMA}.instance_backup_tokens WHERE backup_id = $1`, [
          event.data.backupId,
        ]);
        await sql.execute(`DELETE FROM ${SCHEMA}.instance_backups WHERE backup_id = $1`, [
          event.data.backupId,
        ]);
        return;
    }
  },
});
