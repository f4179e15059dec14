import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { type EventMetadata, refusalCode } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME, SCHEDULED_JOBS_INTERVAL_MS } from '../instance-lifecycle.tokens';
import { type ScheduledJobRow, dueScheduledJobs } from '../read-models/scheduled-jobs/queries';
import { schedulableRoute } from './schedulable-routes';
import {
  type ScheduledJobCommand,
  scheduledJobsDecider,
  scheduledJobsStreamId,
} from './scheduled-job.decider';

/** Default: look for due jobs every minute (RIGMARKET_SCHEDULED_JOBS_INTERVAL_MS; 0 = only when asked). */
export const DEFAULT_SCHEDULED_JOBS_INTERVAL_MS = 60_000;
/** At most this many due jobs per pass: the rest wait for the next one. */
export const SCHEDULED_JOBS_PER_PASS = 100;

export interface ScheduledRun {
  jobId: number;
  dueAt: string;
  ok: boolean;
  msg: string;
}

const iso = (value: Date | string) => new Date(value).toISOString();

/**
 * Runs the scheduled jobs that are due (their next run time, from the job's events, at or before the runtime
 * clock's now): each run is first taken on the job's stream (ScheduledJobRunStarted, which also moves the next
 * run time on; a run already taken by another pass or process is skipped), then the stored call runs as the
 * job's owner through the command its route runs (schedulable-routes.ts), and its outcome is recorded
 * (ScheduledJobRunFinished). So a job runs at most once per due time, and a restart resumes from the stored
 * next run times. Runs missed while the platform was down are not made up: one run, then the next after now.
 */
@Injectable()
export class ScheduledJobRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ScheduledJobRunner');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ScheduledRun[]> | undefined;
  private stopped = false;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
    @Inject(SCHEDULED_JOBS_INTERVAL_MS) private readonly intervalMs: number,
  ) {}

  onApplicationBootstrap(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.runOnce().catch((error: unknown) =>
        this.logger.warn(`scheduled jobs not run: ${(error as Error).message}`),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /**
   * Runs what is due now, one pass at a time; answers the runs it made. Refused after shutdown (the app closes
   * its database next): no pass starts then, and one queued behind a running pass does not start either.
   */
  runOnce(): Promise<ScheduledRun[]> {
    const start = (): Promise<ScheduledRun[]> =>
      this.stopped ? Promise.reject(new Error('the scheduled job runner is stopped')) : this.pass();
    // Started at once when none runs (so a shutdown right after waits for it), else after the running one.
    const next = this.running ? this.running.catch(() => []).then(start) : start();
    this.running = next;
    void next
      .catch(() => undefined)
      .then(() => {
        if (this.running === next) this.running = undefined;
      });
    return next;
  }

  private async pass(): Promise<ScheduledRun[]> {
    const now = this.runtime.runner.clock.now();
    const runs: ScheduledRun[] = [];
    for (const row of await dueScheduledJobs(this.runtime.db, now, SCHEDULED_JOBS_PER_PASS)) {
      const run = await this.runJob(row);
      if (run) runs.push(run);
    }
    return runs;
  }

  private async decide(command: CommandBody<ScheduledJobCommand>, metadata: EventMetadata) {
    return this.runtime.runner.run(
      scheduledJobsStreamId(command.userId),
      scheduledJobsDecider,
      command,
      metadata,
    );
  }

  private async runJob(row: ScheduledJobRow): Promise<ScheduledRun | undefined> {
    const jobId = Number(row.job_id);
    const userId = Number(row.user_id);
    const dueAt = iso(row.next_run_at!);
    const metadata: EventMetadata = {
      correlationId: `scheduled-job-${jobId}-${dueAt}`,
      causationId: `scheduled-job-${jobId}`,
      actor: { userId },
    };
    const taken = await this.decide({ type: 'StartScheduledRun', userId, jobId, dueAt }, metadata);
    if (taken.decided.length === 0) return undefined;
    let ok = true;
    let error: string | null = null;
    let msg: string;
    try {
      const body =
        typeof row.request_body === 'string'
          ? (JSON.parse(row.request_body) as Record<string, unknown>)
          : row.request_body;
      const found = schedulableRoute(row.request_method, row.api_endpoint, body);
      if (!found) throw new Error(`${row.request_method} ${row.api_endpoint} can no longer be scheduled`);
      await this.commands.execute(found.command(userId, metadata, { jobId, dueAt }));
      msg = `${found.route.name} ${found.instanceId}: ${found.route.outcome ?? 'done'}`;
    } catch (failure) {
      ok = false;
      error = refusalCode(failure) ?? 'error';
      msg = String((failure as Error).message ?? failure).slice(0, 500);
      this.logger.warn(`scheduled job ${jobId} (${row.request_method} ${row.api_endpoint}) failed: ${msg}`);
    }
    await this.decide({ type: 'FinishScheduledRun', userId, jobId, dueAt, ok, error, msg }, metadata);
    return { jobId, dueAt, ok, msg };
  }
}
