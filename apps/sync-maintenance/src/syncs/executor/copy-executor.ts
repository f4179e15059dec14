import type { SyncRequested } from '@rigmarket/contracts';

/** What a copy executor is asked to carry out: one job, as the SyncRequested event recorded it. */
export type CopyJob = Pick<
  SyncRequested['data'],
  'jobId' | 'kind' | 'instanceId' | 'srcInstanceId' | 'srcPath' | 'dstPath' | 'rclone'
>;

/**
 * How an executor tells the workflow what happens. Each call records an event; a rejection means the
 * job is no longer active (canceled, possibly by another replica) and the executor must stop.
 */
export interface CopyReporter {
  started(totalBytes: number | null): Promise<void>;
  progress(bytesCopied: number, totalBytes: number | null): Promise<void>;
}

/** A failure the renter should read in status_msg (the message is shown as is). */
export class CopyFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyFailure';
  }
}

/**
 * The port that carries a copy out. Resolves with the bytes copied; rejects with a CopyFailure (the
 * job fails with its message), or with anything once `signal` is aborted (the job was canceled).
 */
export interface CopyExecutor {
  run(job: CopyJob, reporter: CopyReporter, signal: AbortSignal): Promise<{ bytesCopied: number }>;
}

/**
 * Cloud copies run with rclone on the host agent of the instance's machine (instance-lifecycle relays them,
 * with the connection's credentials); one on a machine without a host agent reaches no cloud.
 */
export function cloudCopyUnavailable(job: CopyJob): CopyFailure {
  const rclone = job.rclone;
  return new CopyFailure(
    `Cloud copy (${rclone?.transfer ?? 'unknown direction'}, connection ${rclone?.connection ?? '?'}) cannot run: instance ${job.instanceId} is not on a host-agent machine, and cloud copies run with rclone on the instance's host agent (no cloud connections are reachable from the platform itself); the request is recorded as job ${job.jobId}`,
  );
}

/**
 * Embedded mode's simulated host runs no containers, so there is no file system to copy: the job
 * fails with a clear message instead of pretending to copy.
 */
export class UnavailableCopyExecutor implements CopyExecutor {
  async run(job: CopyJob): Promise<{ bytesCopied: number }> {
    if (job.kind === 'rclone') throw cloudCopyUnavailable(job);
    throw new CopyFailure(
      'Copy not carried out: the instances run on the simulated host, which has no container file system. Start the platform with a Docker host (RIGMARKET_SYNC_EXECUTOR=docker) to copy between containers',
    );
  }
}
