import { DomainError, type DomainEvent } from '@rigmarket/contracts';
import { type Schedule, nextRunAfter } from './schedule';

/**
 * An account's scheduled jobs (`scheduled_jobs-<userId>`, `vastai ... --schedule`, `show scheduled-jobs`,
 * `delete scheduled-job`): each a stored API call (method, path, body) from an allow-list
 * (schedulable-routes.ts), repeated on a schedule as the account, by the ScheduledJobRunner. Private to
 * instance-lifecycle. The job's next run time is part of its events, so the runner resumes after a restart
 * from what is stored.
 */
export interface JobSpec extends Schedule {
  instanceId: number;
  method: string;
  /** The API path the job calls, as the CLI stores it (`/api/v0/instances/reboot/12/`). */
  endpoint: string;
  body: Record<string, unknown>;
}

type JobData = JobSpec & { userId: number; jobId: number; nextRunAt: string | null; at: string };
export type ScheduledJobCreated = DomainEvent<'ScheduledJobCreated', JobData>;
export type ScheduledJobUpdated = DomainEvent<'ScheduledJobUpdated', JobData>;
export type ScheduledJobDeleted = DomainEvent<
  'ScheduledJobDeleted',
  { userId: number; jobId: number; at: string }
>;
/** The run due at `dueAt` is taken (once: a second runner, or a retry, finds it gone); `nextRunAt` follows it. */
export type ScheduledJobRunStarted = DomainEvent<
  'ScheduledJobRunStarted',
  { userId: number; jobId: number; dueAt: string; nextRunAt: string | null; at: string }
>;
/** What the call answered (`ok`, and the error's code and message when refused). */
export type ScheduledJobRunFinished = DomainEvent<
  'ScheduledJobRunFinished',
  { userId: number; jobId: number; dueAt: string; ok: boolean; error: string | null; msg: string; at: string }
>;
export type ScheduledJobEvent =
  | ScheduledJobCreated
  | ScheduledJobUpdated
  | ScheduledJobDeleted
  | ScheduledJobRunStarted
  | ScheduledJobRunFinished;

interface JobState {
  method: string;
  endpoint: string;
  schedule: Schedule;
  nextRunAt: string | null;
  /** The run taken and not finished yet. */
  running: string | null;
}
export interface ScheduledJobsState {
  /** By job id (a plain object, so the state can be snapshotted as JSON). */
  jobs: Record<string, JobState>;
}

export type ScheduledJobCommand = { at: string; userId: number } & (
  | { type: 'CreateScheduledJob'; jobId: number; job: JobSpec }
  | { type: 'UpdateScheduledJob'; jobId: number; job: JobSpec }
  | { type: 'DeleteScheduledJob'; jobId: number }
  | { type: 'StartScheduledRun'; jobId: number; dueAt: string }
  | {
      type: 'FinishScheduledRun';
      jobId: number;
      dueAt: string;
      ok: boolean;
      error: string | null;
      msg: string;
    }
);

export const ScheduledJobErrors = {
  exists: 'scheduled_job_exists',
  notFound: 'scheduled_job_not_found',
} as const;

/** At most this many jobs per account. */
export const SCHEDULED_JOB_LIMITS = { perAccount: 100 } as const;

export const initialState = (): ScheduledJobsState => ({ jobs: {} });

/** Updates the state in place (the runner owns the state it folds). */
export function evolve(state: ScheduledJobsState, event: ScheduledJobEvent): ScheduledJobsState {
  const { jobs } = state;
  switch (event.type) {
    case 'ScheduledJobCreated':
    case 'ScheduledJobUpdated':
      jobs[event.data.jobId] = {
        method: event.data.method,
        endpoint: event.data.endpoint,
        schedule: {
          frequency: event.data.frequency,
          dayOfWeek: event.data.dayOfWeek,
          hourOfDay: event.data.hourOfDay,
          startTime: event.data.startTime,
          endTime: event.data.endTime,
        },
        nextRunAt: event.data.nextRunAt,
        running: null,
      };
      break;
    case 'ScheduledJobDeleted':
      delete jobs[event.data.jobId];
      break;
    case 'ScheduledJobRunStarted': {
      const job = jobs[event.data.jobId];
      if (job)
        jobs[event.data.jobId] = { ...job, nextRunAt: event.data.nextRunAt, running: event.data.dueAt };
      break;
    }
    case 'ScheduledJobRunFinished': {
      const job = jobs[event.data.jobId];
      if (job?.running === event.data.dueAt) jobs[event.data.jobId] = { ...job, running: null };
      break;
    }
  }
  return state;
}

const same = (a: { method: string; endpoint: string }, b: { method: string; endpoint: string }) =>
  a.method === b.method && a.endpoint.replace(/\/+$/, '') === b.endpoint.replace(/\/+$/, '');

export function decide(command: ScheduledJobCommand, state: ScheduledJobsState): ScheduledJobEvent[] {
  const { userId, jobId, at } = command;
  const job = state.jobs[jobId];
  switch (command.type) {
    case 'CreateScheduledJob': {
      for (const [id, existing] of Object.entries(state.jobs))
        if (same(existing, command.job))
          throw new DomainError(
            ScheduledJobErrors.exists,
            `Scheduled job ${id} already calls ${command.job.method} ${command.job.endpoint}; update it with PUT commands/schedule_job/${id}/`,
            { scheduled_job_id: Number(id) },
          );
      if (Object.keys(state.jobs).length >= SCHEDULED_JOB_LIMITS.perAccount)
        throw new DomainError(
          'bad_request',
          `An account keeps at most ${SCHEDULED_JOB_LIMITS.perAccount} scheduled jobs`,
        );
      const nextRunAt = nextRunAfter(command.job, new Date(at))?.toISOString() ?? null;
      return [{ type: 'ScheduledJobCreated', data: { ...command.job, userId, jobId, nextRunAt, at } }];
    }
    case 'UpdateScheduledJob': {
      if (!job) throw new DomainError(ScheduledJobErrors.notFound, `No scheduled job ${jobId}`);
      const nextRunAt = nextRunAfter(command.job, new Date(at))?.toISOString() ?? null;
      return [{ type: 'ScheduledJobUpdated', data: { ...command.job, userId, jobId, nextRunAt, at } }];
    }
    case 'DeleteScheduledJob':
      if (!job) throw new DomainError(ScheduledJobErrors.notFound, `No scheduled job ${jobId}`);
      return [{ type: 'ScheduledJobDeleted', data: { userId, jobId, at } }];
    case 'StartScheduledRun': {
      // Taken already (another runner, a retry), deleted or rescheduled meanwhile: nothing to run.
      if (!job || job.nextRunAt !== command.dueAt) return [];
      // Runs missed while the platform was down are not made up: the next run is the next one after now.
      const after = new Date(Math.max(Date.parse(at), Date.parse(command.dueAt)));
      const nextRunAt = nextRunAfter(job.schedule, after)?.toISOString() ?? null;
      return [
        { type: 'ScheduledJobRunStarted', data: { userId, jobId, dueAt: command.dueAt, nextRunAt, at } },
      ];
    }
    case 'FinishScheduledRun':
      if (!job || job.running !== command.dueAt) return [];
      return [
        {
          type: 'ScheduledJobRunFinished',
          data: {
            userId,
            jobId,
            dueAt: command.dueAt,
            ok: command.ok,
            error: command.error,
            msg: command.msg,
            at,
          },
        },
      ];
  }
}

/**
 * Every run adds two events to the account's stream (an hourly job: 48 a day), so commands start from a
 * snapshot instead of folding the whole history.
 */
export const scheduledJobsDecider = {
  initialState,
  evolve,
  decide,
  snapshot: { version: 1, every: 50 },
};
export const scheduledJobsStreamId = (userId: number): string => `scheduled_jobs-${userId}`;
