import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type EventMetadata, refusalCode } from '@rigmarket/contracts';
import type { ContextRuntime, CommandBody } from '@rigmarket/event-sourcing';
import { COPY_EXECUTOR, SYNC_RUNTIME } from '../sync-maintenance.tokens';
import { type CopyExecutor, CopyFailure, type CopyJob } from './executor/copy-executor';
import { type SyncCommand, SyncErrors, syncDecider, syncStreamId } from './sync.decider';

const SHUTDOWN = new Error('shutting down');

type SyncCommandBody = CommandBody<SyncCommand>;

/** Runs one command on a job's stream with the clock's time. */
export function runSyncCommand(runtime: ContextRuntime, command: SyncCommandBody, metadata: EventMetadata) {
  return runtime.runner.run(syncStreamId(command.instanceId), syncDecider, command, metadata);
}

/**
 * The remote-sync workflow: once SyncRequested is stored, the executor carries the copy out and each of
 * its reports becomes a command on the job's stream (started, progress, completed, failed). A report
 * the decider refuses (the job was canceled, maybe through another replica) stops the copy; a cancel
 * through this process also aborts it at once.
 */
@Injectable()
export class SyncWorkflow implements OnApplicationShutdown {
  private readonly logger = new Logger('SyncWorkflow');
  private readonly running = new Map<number, { abort: AbortController; done: Promise<void> }>();

  constructor(
    @Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(COPY_EXECUTOR) private readonly executor: CopyExecutor,
  ) {}

  launch(job: CopyJob, metadata: EventMetadata): void {
    const abort = new AbortController();
    const done = this.carryOut(job, abort, metadata).finally(() => this.running.delete(job.jobId));
    this.running.set(job.jobId, { abort, done });
  }

  /** Stops the local copy of a job that was just canceled (no-op when it runs elsewhere or is over). */
  abort(jobId: number): void {
    this.running.get(jobId)?.abort.abort(new Error('canceled'));
  }

  /** Resolves when the job's executor has stopped (tests; shutdown). */
  async settled(jobId: number): Promise<void> {
    await this.running.get(jobId)?.done;
  }

  private async carryOut(job: CopyJob, abort: AbortController, metadata: EventMetadata): Promise<void> {
    const { instanceId, jobId } = job;
    const causation: EventMetadata = { ...metadata, causationId: `sync-job-${jobId}` };
    const command = (body: SyncCommandBody) =>
      runSyncCommand(this.runtime, body, causation).then(() => undefined);
    try {
      const { bytesCopied } = await this.executor.run(
        job,
        {
          started: (totalBytes) => command({ type: 'StartSync', instanceId, jobId, totalBytes }),
          progress: (copied, totalBytes) =>
            command({ type: 'ReportProgress', instanceId, jobId, bytesCopied: copied, totalBytes }),
        },
        abort.signal,
      );
      await command({ type: 'CompleteSync', instanceId, jobId, bytesCopied });
    } catch (error) {
      if (abort.signal.aborted && abort.signal.reason !== SHUTDOWN) return;
      // A report refused because the job was canceled (maybe through another replica): the copy stopped, as it should.
      if (refusalCode(error) === SyncErrors.notActive) return;
      const reason =
        abort.signal.reason === SHUTDOWN
          ? 'Interrupted: the sync service stopped during the copy; start the copy again'
          : error instanceof CopyFailure
            ? error.message
            : `Unexpected error: ${(error as Error).message}`;
      if (!(error instanceof CopyFailure) && !abort.signal.aborted)
        this.logger.warn(`sync job ${jobId}: ${reason}`);
      // FailSync is a no-op when the job is no longer active (a refused report after a cancel).
      await command({ type: 'FailSync', instanceId, jobId, reason }).catch((e: unknown) =>
        this.logger.error(`sync job ${jobId}: could not record the failure: ${String(e)}`),
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const { abort } of this.running.values()) abort.abort(SHUTDOWN);
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }
}
