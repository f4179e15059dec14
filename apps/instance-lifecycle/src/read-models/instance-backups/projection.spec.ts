import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { instanceBackupsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';
const LATER = '2026-05-01T12:05:00.000Z';
const requested = (backupId: number, contractId: number, ownerId: number) => ({
  streamId: `instance_backup-${backupId}`,
  type: 'InstanceBackupRequested' as const,
  data: { backupId, contractId, ownerId, machineId: 3, kind: 'instance' as const, info: 'changes', at: AT },
});
const stored = (backupId: number, size: number) => ({
  streamId: `instance_backup-${backupId}`,
  type: 'InstanceBackupStored' as const,
  data: { backupId, files: [{ name: 'upper.tar', size }], at: LATER },
});
const authorized = (backupId: number, tokenHash: string, expiresAt: string, at: string) => ({
  streamId: `instance_backup-${backupId}`,
  type: 'InstanceBackupDownloadAuthorized' as const,
  data: { backupId, tokenHash, expiresAt, at },
});

describe('instance_backups projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, instanceBackupsProjection);
  afterAll(() => spec.close());

  it('lists each backup with its status, files and size; a failed one says why; a deleted one is gone', () =>
    spec
      .given([requested(1, 70, 9), requested(2, 71, 9), requested(3, 72, 8), stored(1, 2048)])
      .when(
        {
          streamId: 'instance_backup-2',
          type: 'InstanceBackupFailed',
          data: { backupId: 2, reason: 'over the bound', at: LATER },
        },
        {
          streamId: 'instance_backup-3',
          type: 'InstanceBackupDeleted',
          data: { backupId: 3, reason: 'expired', at: LATER },
        },
      )
      .then(
        `SELECT backup_id, contract_id, owner_id, status, info, files, bytes::int AS bytes
           FROM instance_lifecycle.instance_backups ORDER BY backup_id`,
        [
          {
            backup_id: 1,
            contract_id: 70,
            owner_id: 9,
            status: 'success',
            info: 'changes',
            files: [{ name: 'upper.tar', size: 2048 }],
            bytes: 2048,
          },
          {
            backup_id: 2,
            contract_id: 71,
            owner_id: 9,
            status: 'error',
            info: 'over the bound',
            files: [],
            bytes: 0,
          },
        ],
      ));

  it("keeps the download tokens' hashes, drops a backup's expired ones at its next token, and all with the backup", () =>
    spec
      .given([
        requested(1, 70, 9),
        stored(1, 2048),
        requested(2, 71, 9),
        stored(2, 10),
        authorized(1, 'h1', '2026-05-01T12:10:00.000Z', LATER),
        authorized(2, 'h2', '2026-05-01T12:10:00.000Z', LATER),
      ])
      .when(authorized(1, 'h3', '2026-05-01T12:30:00.000Z', '2026-05-01T12:20:00.000Z'), {
        streamId: 'instance_backup-2',
        type: 'InstanceBackupDeleted',
        data: { backupId: 2, reason: 'superseded', at: LATER },
      })
      .then(
        `SELECT token_hash, backup_id FROM instance_lifecycle.instance_backup_tokens ORDER BY token_hash`,
        [{ token_hash: 'h3', backup_id: 1 }],
      ));
});
