import { DomainError, type DomainEvent } from '@rigmarket/contracts';

/**
 * `instance_backup-<backupId>`: a backup the platform takes of an instance's data when the host removes the
 * instance while its renter has not destroyed it (`vastai cleanup machine`; docs/instances.md, "Instance
 * backups"). Private to instance-lifecycle. Requested in the transaction that removes the instance; the
 * host's outcome (stored with its files, or failed with the reason) ends it once, and later reports change
 * nothing; download tokens are recorded by their SHA-256 only; retention deletes it.
 */
export interface BackupFile {
  name: string;
  /** Bytes. */
  size: number;
}

export type BackupKind = 'instance' | 'volume';

export type InstanceBackupRequested = DomainEvent<
  'InstanceBackupRequested',
  {
    backupId: number;
    contractId: number;
    /** The renter: the only one who sees the backup. */
    ownerId: number;
    machineId: number;
    kind: BackupKind;
    /** What is backed up, in words (shown as `info` while pending). */
    info: string;
    at: string;
  }
>;
export type InstanceBackupStored = DomainEvent<
  'InstanceBackupStored',
  { backupId: number; files: BackupFile[]; at: string }
>;
export type InstanceBackupFailed = DomainEvent<
  'InstanceBackupFailed',
  { backupId: number; reason: string; at: string }
>;
/** A download token was handed to the owner: only its SHA-256 (hex) is kept, never the token. */
export type InstanceBackupDownloadAuthorized = DomainEvent<
  'InstanceBackupDownloadAuthorized',
  { backupId: number; tokenHash: string; expiresAt: string; at: string }
>;
/** reason: 'expired' (older than the retention) or 'superseded' (over the per-user count). */
export type InstanceBackupDeleted = DomainEvent<
  'InstanceBackupDeleted',
  { backupId: number; reason: 'expired' | 'superseded'; at: string }
>;
export type InstanceBackupEvent =
  | InstanceBackupRequested
  | InstanceBackupStored
  | InstanceBackupFailed
  | InstanceBackupDownloadAuthorized
  | InstanceBackupDeleted;

export type BackupStatus = 'pending' | 'success' | 'error' | 'deleted';

export type InstanceBackupState =
  | { status: 'none' }
  | { status: BackupStatus; backupId: number; contractId: number; ownerId: number; requestedAt: string };

export type InstanceBackupCommand = { at: string } & (
  | (Omit<InstanceBackupRequested['data'], 'at'> & { type: 'RequestBackup' })
  | { type: 'StoreBackup'; files: BackupFile[] }
  | { type: 'FailBackup'; reason: string }
  | { type: 'AuthorizeDownload'; requesterId: number; tokenHash: string; expiresAt: string }
  | { type: 'DeleteBackup'; reason: 'expired' | 'superseded' }
);

export const BackupErrors = { notFound: 'no_such_backup', notReady: 'backup_not_ready' } as const;

export const initialState = (): InstanceBackupState => ({ status: 'none' });

export function evolve(state: InstanceBackupState, event: InstanceBackupEvent): InstanceBackupState {
  switch (event.type) {
    case 'InstanceBackupRequested': {
      const { backupId, contractId, ownerId, at } = event.data;
      return { status: 'pending', backupId, contractId, ownerId, requestedAt: at };
    }
    case 'InstanceBackupStored':
      return state.status === 'none' ? state : { ...state, status: 'success' };
    case 'InstanceBackupFailed':
      return state.status === 'none' ? state : { ...state, status: 'error' };
    case 'InstanceBackupDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
    case 'InstanceBackupDownloadAuthorized':
      return state;
  }
}

export function decide(command: InstanceBackupCommand, state: InstanceBackupState): InstanceBackupEvent[] {
  const { at } = command;
  if (command.type === 'RequestBackup') {
    if (state.status !== 'none') return []; // a retried request
    const { type: _type, at: _at, ...data } = command;
    return [{ type: 'InstanceBackupRequested', data: { ...data, at } }];
  }
  if (state.status === 'none') throw new DomainError(BackupErrors.notFound, 'No such backup');
  const { backupId } = state;
  switch (command.type) {
    case 'StoreBackup':
      // The outcome is recorded once: a late or repeated report changes nothing.
      if (state.status !== 'pending') return [];
      return [{ type: 'InstanceBackupStored', data: { backupId, files: command.files, at } }];
    case 'FailBackup':
      if (state.status !== 'pending') return [];
      return [{ type: 'InstanceBackupFailed', data: { backupId, reason: command.reason, at } }];
    case 'AuthorizeDownload':
      // Another user's backup is reported as missing, like a deleted one.
      if (state.ownerId !== command.requesterId || state.status === 'deleted')
        throw new DomainError(BackupErrors.notFound, 'No such backup');
      if (state.status !== 'success')
        throw new DomainError(BackupErrors.notReady, 'The backup holds no stored objects');
      return [
        {
          type: 'InstanceBackupDownloadAuthorized',
          data: { backupId, tokenHash: command.tokenHash, expiresAt: command.expiresAt, at },
        },
      ];
    case 'DeleteBackup':
      if (state.status === 'deleted') return [];
      return [{ type: 'InstanceBackupDeleted', data: { backupId, reason: command.reason, at } }];
  }
}

/**
 * The stream grows with use (an event per download token handed out), so commands start from a snapshot of
 * the state (plain JSON) every 100 events rather than folding the whole history.
 */
export const instanceBackupDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const instanceBackupStreamId = (backupId: number): string => `instance_backup-${backupId}`;
