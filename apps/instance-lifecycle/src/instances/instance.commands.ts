import type {
  InstanceActualStatus,
  InstanceConfigChanges,
  InstanceCreated,
  InstanceIntendedStatus,
} from '@rigmarket/contracts';

/** What creating an instance records: the InstanceCreated fields, with the optional ones required. */
export type CreateInstanceData = Required<
  Omit<InstanceCreated['data'], 'createdAt' | 'apiKeyHash' | 'defaultJob'>
> &
  Pick<InstanceCreated['data'], 'apiKeyHash' | 'defaultJob'>;

export interface HostReport {
  actualStatus: Exclude<InstanceActualStatus, null>;
  sshHost?: string | null;
  sshPort?: number | null;
  ports?: Record<string, number>;
  statusMsg?: string | null;
}

export type InstanceCommand = { at: string } & (
  | ({ type: 'CreateInstance' } & CreateInstanceData)
  | { type: 'SetIntendedState'; requesterId: number; state: InstanceIntendedStatus }
  | { type: 'LabelInstance'; requesterId: number; label: string }
  | { type: 'DestroyInstance'; requesterId: number }
  /**
   * `vastai cleanup machine`: the machine's owner removes an instance whose contract ended (contractEnd, epoch
   * seconds: the end date of the machine's listing) and which no longer runs; anything else is left alone.
   */
  | { type: 'ExpireInstance'; hostId: number; contractEnd: number | null }
  | { type: 'RestartInstance'; requesterId: number; recycle: boolean }
  /** changes: already bounded (update-request.ts); templateId when a template was named. */
  | {
      type: 'UpdateInstanceConfig';
      requesterId: number;
      changes: InstanceConfigChanges;
      templateId: number | null;
    }
  | { type: 'MarkOutbid'; reason?: 'credit' }
  | { type: 'ChangeBid'; requesterId: number; price: number }
  | ({ type: 'ReportHostState' } & HostReport)
  | { type: 'AttachVolume'; volumeId: number; ownerId: number; machineId: number }
  | { type: 'FailVolume'; reason: string }
  /** publicKey: one OpenSSH public key line, already parsed (parsePublicKey). */
  | { type: 'AttachSshKey'; requesterId: number; publicKey: string }
  | { type: 'DetachSshKey'; requesterId: number; keyId: number }
  /** image: `registry/repo:tag`, already checked (snapshot.decider.ts). */
  | { type: 'TakeSnapshot'; requesterId: number; image: string; pause: boolean }
  /** The host's outcome of a snapshot: the pushed digest, or why it failed. */
  | { type: 'ReportSnapshot'; snapshotId: number; digest: string | null; reason: string | null }
);

export const InstanceErrors = {
  notFound: 'no_such_instance',
  exists: 'instance_exists',
  cannotStart: 'instance_cannot_start',
  notRunning: 'instance_not_running',
  notABid: 'not_a_bid',
  invalidReport: 'invalid_transition',
  waitingForVolume: 'instance_waiting_for_volume',
  volumeMismatch: 'volume_mismatch',
  sshKeyNotFound: 'ssh_key_not_found',
  tooManySshKeys: 'too_many_ssh_keys',
  snapshotRunning: 'snapshot_in_progress',
  nothingToUpdate: 'nothing_to_update',
} as const;

/** status_msg of an instance whose volume (create_new) could not be created. */
export const volumeFailedMsg = (reason: string): string =>
  `Provisioning failed: the volume could not be created (${reason}). Destroy the instance and rent again, with a smaller volume or another volume offer.`;
