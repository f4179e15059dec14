import { DomainError, type SyncEvent, type SyncKind, type SyncRequested } from '@rigmarket/contracts';

/**
 * `sync-<instanceId>`: the remote syncs (copy jobs) that write into one instance (the destination of
 * copy_direct, the instance of a cloud copy). A workflow: the API requests a job, the copy executor
 * reports started / progress / completed / failed, the owner may cancel. At most one job is active per
 * instance. A canceled (or failed) job never resumes: a new request is a new job id and copies from the
 * beginning, which the executor's reports cannot confuse because each names its job.
 */
export type SyncStatus = 'requested' | 'running' | 'completed' | 'failed' | 'canceled';

export interface SyncJob {
  jobId: number;
  kind: SyncKind;
  ownerId: number;
  status: SyncStatus;
  bytesCopied: number;
  totalBytes: number | null;
}

export interface SyncState {
  current: SyncJob | null;
}

/** What requesting a copy records: the SyncRequested fields but its time. */
export type SyncRequestData = Omit<SyncRequested['data'], 'at'>;

export type SyncCommand = { instanceId: number; at: string } & (
  | ({ type: 'RequestSync' } & SyncRequestData)
  | { type: 'StartSync'; jobId: number; totalBytes: number | null }
  | { type: 'ReportProgress'; jobId: number; bytesCopied: number; totalBytes: number | null }
  | { type: 'CompleteSync'; jobId: number; bytesCopied: number }
  | { type: 'FailSync'; jobId: number; reason: string }
  | { type: 'CancelSync'; requesterId: number }
);

export const SyncErrors = {
  inProgress: 'sync_in_progress',
  /** The job the executor reports on is no longer active (canceled or replaced): stop copying. */
  notActive: 'sync_not_active',
} as const;

export const ACTIVE: readonly SyncStatus[] = ['requested', 'running'];
export const isActive = (job: SyncJob | null): job is SyncJob => job !== null && ACTIVE.includes(job.status);

export const syncStreamId = (instanceId: number): string => `sync-${instanceId}`;

export const initialState = (): SyncState => ({ current: null });

export function evolve(state: SyncState, event: SyncEvent): SyncState {
  const current = state.current;
  switch (event.type) {
    case 'SyncRequested': {
      const d = event.data;
      return {
        current: {
          jobId: d.jobId,
          kind: d.kind,
          ownerId: d.ownerId,
          status: 'requested',
          bytesCopied: 0,
          totalBytes: null,
        },
      };
    }
    case 'SyncStarted':
      return current
        ? { current: { ...current, status: 'running', totalBytes: event.data.totalBytes } }
        : state;
    case 'SyncProgressed':
      return current
        ? { current: { ...current, bytesCopied: event.data.bytesCopied, totalBytes: event.data.totalBytes } }
        : state;
    case 'SyncCompleted':
      return current
        ? { current: { ...current, status: 'completed', bytesCopied: event.data.bytesCopied } }
        : state;
    case 'SyncFailed':
      return current ? { current: { ...current, status: 'failed' } } : state;
    case 'SyncCanceled':
      return current ? { current: { ...current, status: 'canceled' } } : state;
    default:
      return state;
  }
}

/** The executor's report must name the active job; anything else means "stop, this copy is over". */
function activeJob(state: SyncState, jobId: number): SyncJob {
  const job = state.current;
  if (!isActive(job) || job.jobId !== jobId) {
    throw new DomainError(SyncErrors.notActive, `Remote copy job ${jobId} is no longer active`);
  }
  return job;
}

export function decide(command: SyncCommand, state: SyncState): SyncEvent[] {
  const { instanceId, at } = command;
  switch (command.type) {
    case 'RequestSync': {
      if (isActive(state.current)) {
        throw new DomainError(
          SyncErrors.inProgress,
          `A remote copy to instance ${instanceId} is already in progress; cancel it first`,
        );
      }
      const { type: _type, at: _at, ...data } = command;
      return [{ type: 'SyncRequested', data: { ...data, at } }];
    }
    case 'StartSync': {
      const job = activeJob(state, command.jobId);
      if (job.status !== 'requested') return [];
      return [
        { type: 'SyncStarted', data: { instanceId, jobId: job.jobId, totalBytes: command.totalBytes, at } },
      ];
    }
    case 'ReportProgress': {
      const job = activeJob(state, command.jobId);
      if (command.bytesCopied <= job.bytesCopied && command.totalBytes === job.totalBytes) return [];
      return [
        {
          type: 'SyncProgressed',
          data: {
            instanceId,
            jobId: job.jobId,
            bytesCopied: command.bytesCopied,
            totalBytes: command.totalBytes,
            at,
          },
        },
      ];
    }
    case 'CompleteSync': {
      const job = activeJob(state, command.jobId);
      return [
        {
          type: 'SyncCompleted',
          data: { instanceId, jobId: job.jobId, bytesCopied: command.bytesCopied, at },
        },
      ];
    }
    case 'FailSync': {
      const job = state.current;
      // A failure report after a cancel (the aborted stream errors out) changes nothing.
      if (!isActive(job) || job.jobId !== command.jobId) return [];
      return [{ type: 'SyncFailed', data: { instanceId, jobId: job.jobId, reason: command.reason, at } }];
    }
    case 'CancelSync': {
      const job = state.current;
      if (!isActive(job)) return [];
      return [
        { type: 'SyncCanceled', data: { instanceId, jobId: job.jobId, canceledBy: command.requesterId, at } },
      ];
    }
    default:
      return [];
  }
}

/**
 * The stream grows with use (every copy on the instance adds its events, and a running copy one per progress report (about one a second)), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const syncDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
