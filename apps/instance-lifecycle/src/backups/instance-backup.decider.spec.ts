import { deciderSpec } from '@rigmarket/testing';
import { BackupErrors, type InstanceBackupEvent, instanceBackupDecider } from './instance-backup.decider';

const AT = '2026-05-01T12:00:00.000Z';
const LATER = '2026-05-01T12:05:00.000Z';
const request = {
  backupId: 4,
  contractId: 77,
  ownerId: 9,
  machineId: 3,
  kind: 'instance' as const,
  info: "the container's changes",
};
const requested: InstanceBackupEvent = { type: 'InstanceBackupRequested', data: { ...request, at: AT } };
const files = [{ name: 'upper.tar', size: 10_240 }];
const stored: InstanceBackupEvent = { type: 'InstanceBackupStored', data: { backupId: 4, files, at: LATER } };
const failed: InstanceBackupEvent = {
  type: 'InstanceBackupFailed',
  data: { backupId: 4, reason: 'over the bound', at: LATER },
};
const deleted: InstanceBackupEvent = {
  type: 'InstanceBackupDeleted',
  data: { backupId: 4, reason: 'expired', at: LATER },
};
const authorize = { at: LATER, requesterId: 9, tokenHash: 'a'.repeat(64), expiresAt: LATER };
const spec = deciderSpec(instanceBackupDecider);

describe('instance backup decider', () => {
  it('requests a backup once; a retried request changes nothing', () => {
    spec
      .given([])
      .when({ at: AT, type: 'RequestBackup', ...request })
      .then([requested]);
    spec
      .given([requested])
      .when({ at: AT, type: 'RequestBackup', ...request })
      .thenNothingHappened();
  });

  it("records the host's outcome once: stored with its files, or failed with the reason", () => {
    spec.given([requested]).when({ at: LATER, type: 'StoreBackup', files }).then([stored]);
    spec.given([requested]).when({ at: LATER, type: 'FailBackup', reason: 'over the bound' }).then([failed]);
    // a late or repeated report after the outcome
    spec
      .given([requested, stored])
      .when({ at: LATER, type: 'FailBackup', reason: 'interrupted' })
      .thenNothingHappened();
    spec.given([requested, failed]).when({ at: LATER, type: 'StoreBackup', files }).thenNothingHappened();
  });

  it('refuses reports about a backup that was never requested', () => {
    spec.given([]).when({ at: LATER, type: 'StoreBackup', files }).thenThrows(BackupErrors.notFound);
  });

  it('authorizes a download of a stored backup for its owner only, keeping the token hash', () => {
    spec
      .given([requested, stored])
      .when({ type: 'AuthorizeDownload', ...authorize })
      .then([
        {
          type: 'InstanceBackupDownloadAuthorized',
          data: { backupId: 4, tokenHash: authorize.tokenHash, expiresAt: LATER, at: LATER },
        },
      ]);
    spec
      .given([requested, stored])
      .when({ type: 'AuthorizeDownload', ...authorize, requesterId: 10 })
      .thenThrows(BackupErrors.notFound);
    spec
      .given([requested])
      .when({ type: 'AuthorizeDownload', ...authorize })
      .thenThrows(BackupErrors.notReady);
    spec
      .given([requested, stored, deleted])
      .when({ type: 'AuthorizeDownload', ...authorize })
      .thenThrows(BackupErrors.notFound);
  });

  it('deletes a backup once (retention)', () => {
    spec
      .given([requested, stored])
      .when({ at: LATER, type: 'DeleteBackup', reason: 'expired' })
      .then([deleted]);
    spec
      .given([requested, stored, deleted])
      .when({ at: LATER, type: 'DeleteBackup', reason: 'superseded' })
      .thenNothingHappened();
  });
});
