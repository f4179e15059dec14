import { pipeline } from 'node:stream/promises';
import { ThrottleStream, prepareDestination, prepareSource } from '@rigmarket/container-copy';
import type Docker from 'dockerode';
import {
  type CopyExecutor,
  CopyFailure,
  type CopyJob,
  type CopyReporter,
  cloudCopyUnavailable,
} from './copy-executor';

/**
 * A client of the engine at DOCKER_HOST. dockerode is loaded here, not at start: only
 * RIGMARKET_SYNC_EXECUTOR=docker needs it (with its dependencies about 20 MB and most of a second to load).
 */
function dockerFromEnvironment(): Docker {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  const DockerClient = require('dockerode') as typeof Docker;
  return new DockerClient();
}

/** Finds the container of an instance on the engine, or null. */
export type ContainerResolver = (docker: Docker, instanceId: number) => Promise<Docker.Container | null>;

/** The host driver's contract: containers carry `rigmarket.instance_id=<id>` and are named `rigmarket-instance-<id>`. */
export const INSTANCE_LABEL = 'rigmarket.instance_id';
export const containerName = (instanceId: number): string => `rigmarket-instance-${instanceId}`;

/** By label first (the contract's stable key), then by name. Extra labels narrow it (tests share an engine). */
export function labelResolver(extraLabels: Record<string, string> = {}): ContainerResolver {
  return async (docker, instanceId) => {
    const labels = [
      `${INSTANCE_LABEL}=${instanceId}`,
      ...Object.entries(extraLabels).map(([k, v]) => `${k}=${v}`),
    ];
    const found = await docker.listContainers({ all: true, filters: { label: labels } });
    if (found[0]) return docker.getContainer(found[0].Id);
    if (Object.keys(extraLabels).length > 0) return null;
    const byName = docker.getContainer(containerName(instanceId));
    try {
      await byName.inspect();
      return byName;
    } catch {
      return null;
    }
  };
}

export interface DockerCopyOptions {
  docker?: Docker;
  /** Copy rate limit (default 50 MB/s). */
  bytesPerSecond?: number;
  /** How often progress is recorded (default 2 s: each report is an event). */
  progressIntervalMs?: number;
  resolve?: ContainerResolver;
}

/**
 * Copies between two containers on one Docker Engine: a tar of the source path (GET archive) streamed
 * through a throttle into the destination directory (PUT archive), created first if missing. Cancel
 * aborts both HTTP streams at once; the destination keeps whatever had been extracted (incomplete).
 *
 * It talks to the engine directly, so both instances must run on the engine it reaches (DOCKER_HOST):
 * one host, or a test. Instances on host-agent machines are copied by their agents instead (the
 * `agents` executor of a job, docs/sync-maintenance.md).
 */
export class DockerCopyExecutor implements CopyExecutor {
  private readonly docker: Docker;
  private readonly bytesPerSecond: number;
  private readonly progressIntervalMs: number;
  private readonly resolve: ContainerResolver;

  constructor(options: DockerCopyOptions = {}) {
    this.docker = options.docker ?? dockerFromEnvironment();
    this.bytesPerSecond = options.bytesPerSecond ?? 50 * 1024 * 1024;
    this.progressIntervalMs = options.progressIntervalMs ?? 2000;
    this.resolve = options.resolve ?? labelResolver();
  }

  async run(job: CopyJob, reporter: CopyReporter, signal: AbortSignal): Promise<{ bytesCopied: number }> {
    if (job.kind === 'rclone' || job.srcInstanceId === null) throw cloudCopyUnavailable(job);
    const source = await this.container(job.srcInstanceId, 'source');
    const destination = await this.container(job.instanceId, 'destination');
    const prepared = await prepareSource(source, job.srcPath);
    if (!prepared)
      throw new CopyFailure(`Source path ${job.srcPath} not found in instance ${job.srcInstanceId}`);
    const { path: srcPath, totalBytes } = prepared;
    const dstDir = await prepareDestination(destination, job.dstPath);

    await reporter.started(totalBytes);
    const abort = new AbortController();
    const onCancel = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onCancel);
    let reporting: Promise<void> | null = null;
    const throttle = new ThrottleStream(this.bytesPerSecond);
    const report = () => {
      if (reporting) return;
      const copied = totalBytes === null ? throttle.bytesPassed : Math.min(throttle.bytesPassed, totalBytes);
      reporting = reporter
        .progress(copied, totalBytes)
        // The job is no longer active (canceled elsewhere): stop copying.
        .catch((error: unknown) => abort.abort(error))
        .finally(() => {
          reporting = null;
        });
    };
    const timer = setInterval(report, this.progressIntervalMs);
    try {
      const tar = await source.getArchive({ path: srcPath, abortSignal: abort.signal });
      const upload = destination.putArchive(throttle, { path: dstDir, abortSignal: abort.signal });
      await Promise.all([pipeline(tar, throttle, { signal: abort.signal }), upload]);
      if (abort.signal.aborted) throw abort.signal.reason;
      return { bytesCopied: totalBytes ?? throttle.bytesPassed };
    } catch (error) {
      if (abort.signal.aborted) throw abort.signal.reason ?? error;
      throw new CopyFailure(`Copy from instance ${job.srcInstanceId} failed: ${(error as Error).message}`);
    } finally {
      clearInterval(timer);
      signal.removeEventListener('abort', onCancel);
      throttle.destroy();
    }
  }

  private async container(instanceId: number, role: string): Promise<Docker.Container> {
    const container = await this.resolve(this.docker, instanceId).catch((error: unknown) => {
      throw new CopyFailure(
        `The Docker Engine could not be reached to find the ${role} instance ${instanceId}: ${(error as Error).message}`,
      );
    });
    if (!container) {
      throw new CopyFailure(`No container for ${role} instance ${instanceId} on this host's Docker Engine`);
    }
    return container;
  }
}
