import type { DomainEvent } from './envelope';

/**
 * Public (integration) events of the sync-maintenance context. marketplace-api projects the maintenance
 * windows (offers stop being rentable for rentals that would overlap one) and instance-lifecycle projects
 * both (the upcoming window on a renter's instance, a sync's progress in the destination's status_msg).
 */

/** Host maintenance windows of one machine (`maintenance-<machineId>`). Times are epoch seconds. */
export type MaintenanceScheduled = DomainEvent<
  'MaintenanceScheduled',
  {
    machineId: number;
    windowId: number;
    ownerId: number;
    startTime: number;
    endTime: number;
    durationHours: number;
    category: string;
    at: string;
  }
>;
/** `cancel maint` deletes every window of the machine that has not ended yet, in one event. */
export type MaintenanceCanceled = DomainEvent<
  'MaintenanceCanceled',
  { machineId: number; windowIds: number[]; at: string }
>;
export type MaintenanceEvent = MaintenanceScheduled | MaintenanceCanceled;

/** copy_direct: instance to instance; rclone: between an instance and a cloud connection. */
export type SyncKind = 'copy_direct' | 'rclone';
export type CloudTransfer = 'Instance To Cloud' | 'Cloud To Instance';

export interface RcloneRequest {
  /** The cloud connection id (`selected`, a string in the CLI's body). */
  connection: string;
  transfer: CloudTransfer;
  flags: string[];
}

/**
 * Remote syncs targeting one instance (`sync-<instanceId>`): the destination of a copy_direct, the
 * instance of a cloud copy. At most one runs at a time; each start is a new job (a canceled job never
 * resumes). Byte counts are of the tar stream.
 */
export type SyncRequested = DomainEvent<
  'SyncRequested',
  {
    instanceId: number;
    jobId: number;
    kind: SyncKind;
    ownerId: number;
    srcInstanceId: number | null;
    srcPath: string;
    dstPath: string;
    rclone: RcloneRequest | null;
    /**
     * Who carries the job out, decided once when it is requested: `agents` (both instances on host-agent
     * machines: instance-lifecycle relays it over the agent channel) or `platform` (sync-maintenance's own
     * copy executor). Absent in events recorded before agent copies existed: `platform`.
     */
    executor?: SyncExecutor;
    at: string;
  }
>;
export type SyncExecutor = 'agents' | 'platform';
export type SyncStarted = DomainEvent<
  'SyncStarted',
  { instanceId: number; jobId: number; totalBytes: number | null; at: string }
>;
export type SyncProgressed = DomainEvent<
  'SyncProgressed',
  { instanceId: number; jobId: number; bytesCopied: number; totalBytes: number | null; at: string }
>;
export type SyncCompleted = DomainEvent<
  'SyncCompleted',
  { instanceId: number; jobId: number; bytesCopied: number; at: string }
>;
export type SyncFailed = DomainEvent<
  'SyncFailed',
  { instanceId: number; jobId: number; reason: string; at: string }
>;
export type SyncCanceled = DomainEvent<
  'SyncCanceled',
  { instanceId: number; jobId: number; canceledBy: number; at: string }
>;

export type SyncEvent =
  SyncRequested | SyncStarted | SyncProgressed | SyncCompleted | SyncFailed | SyncCanceled;

export const SyncPublicEvents = {
  MaintenanceScheduled: { schemaVersion: 1, streamType: 'maintenance' },
  MaintenanceCanceled: { schemaVersion: 1, streamType: 'maintenance' },
  SyncRequested: { schemaVersion: 1, streamType: 'sync' },
  SyncStarted: { schemaVersion: 1, streamType: 'sync' },
  SyncProgressed: { schemaVersion: 1, streamType: 'sync' },
  SyncCompleted: { schemaVersion: 1, streamType: 'sync' },
  SyncFailed: { schemaVersion: 1, streamType: 'sync' },
  SyncCanceled: { schemaVersion: 1, streamType: 'sync' },
} as const;

/** Where maintenance windows are published and the events a read model of them follows. */
export const MAINTENANCE_FEED = {
  sources: [{ context: 'sync', streamType: 'maintenance' }],
  eventTypes: ['MaintenanceScheduled', 'MaintenanceCanceled'],
} as const satisfies { sources: readonly object[]; eventTypes: readonly MaintenanceEvent['type'][] };

/** Where remote copy jobs are published and the events a read model of them follows. */
export const SYNC_FEED = {
  sources: [{ context: 'sync', streamType: 'sync' }],
  eventTypes: [
    'SyncRequested',
    'SyncStarted',
    'SyncProgressed',
    'SyncCompleted',
    'SyncFailed',
    'SyncCanceled',
  ],
} as const satisfies { sources: readonly object[]; eventTypes: readonly SyncEvent['type'][] };

/** The columns every read model of MAINTENANCE_FEED keeps for a window (times in epoch seconds). */
export interface MaintenanceWindowColumns {
  machine_id: number;
  start_time: number;
  end_time: number;
  duration_hours: number;
  category: string;
}
