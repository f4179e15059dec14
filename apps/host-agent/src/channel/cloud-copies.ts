import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CLOUD_COPY_FLAGS, type CloudCopyOrder, type LifecycleToAgent } from '@rigmarket/contracts';
import type { AgentDriver } from '../drivers/agent-driver';
import type { CopyChannel } from './agent-copies';

type CloudCopyCommand = Extract<LifecycleToAgent, { type: 'cloud_copy' }>;

export interface CloudCopyOptions {
  /** The rclone command (default `rclone` on the PATH: Debian's package, scripts/rclone.sh). */
  rclone?: string;
  /** Where the staging directories are made (default the OS temp directory). */
  stagingRoot?: string;
}

/** rclone names the remote `cloud` from these variables: nothing is written to a config file. */
const REMOTE = 'cloud';

const reasonOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 300);

/** Runs a command, feeding `input` to its stdin and/or piping its stdout to `output`; rejects on a non-zero exit. */
function runTool(
  command: string,
  args: string[],
  signal: AbortSignal,
  io: { input?: Readable; output?: Writable; env?: NodeJS.ProcessEnv; onStderrLine?: (line: string) => void },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, {
      env: io.env ?? { PATH: process.env.PATH },
      stdio: [io.input ? 'pipe' : 'ignore', io.output ? 'pipe' : 'ignore', 'pipe'],
      signal,
    });
    let stderr = '';
    let pending = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stderr = (stderr + text).slice(-4000);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) io.onStderrLine?.(line);
    });
    if (io.input && child.stdin) {
      child.stdin.on('error', () => undefined);
      io.input.on('error', (error) => {
        child.kill();
        reject(error);
      });
      io.input.pipe(child.stdin);
    }
    if (io.output && child.stdout) child.stdout.pipe(io.output);
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error(`${command} is not installed on this host (Debian package ${command})`)
          : error,
      ),
    );
    child.on('close', (code) => {
      if (pending) io.onStderrLine?.(pending);
      if (code === 0) resolve();
      else
        reject(new Error(`${command} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/** One line of rclone's --use-json-log output: its stats (bytes so far) or an error message. */
function rcloneLine(line: string): { bytes?: number; error?: string } {
  try {
    const entry = JSON.parse(line) as { level?: string; msg?: string; stats?: { bytes?: number } };
    if (typeof entry.stats?.bytes === 'number') return { bytes: entry.stats.bytes };
    if (entry.level === 'error' && typeof entry.msg === 'string') return { error: entry.msg };
  } catch {
    // not a JSON line (rclone's own start-up notices)
  }
  return {};
}

/**
 * The host agent's side of cloud copies (`vastai cloud copy`, docs/sync-maintenance.md "Cloud copies"): rclone
 * runs here on the host, never inside the container, over a staging directory of the host. Instance to cloud:
 * the driver's tar of the container path is extracted into the staging directory (GNU tar: no absolute names,
 * no `..`), then `rclone copy` sends it to the bucket path; rclone skips symbolic links, so nothing outside the
 * staging directory is read. Cloud to instance: `rclone copy` fetches the bucket path into the staging
 * directory, whose tar the driver extracts into the container directory. The credentials reach rclone only in
 * its environment (never on its command line, in a file or in a log line). Reports: copy_source when it
 * starts, copy_ack with rclone's byte count every second, copy_done or copy_failed; copy_abort stops it.
 */
export class CloudCopies {
  private readonly running = new Map<number, AbortController>();

  constructor(
    private readonly driver: AgentDriver,
    private readonly channel: CopyChannel,
    private readonly options: CloudCopyOptions = {},
  ) {}

  handle(command: CloudCopyCommand): void {
    if (this.running.has(command.jobId)) return;
    const abort = new AbortController();
    this.running.set(command.jobId, abort);
    void this.carryOut(command, abort.signal).finally(() => this.running.delete(command.jobId));
  }

  /** Stops a cloud copy of this agent; false when the job is not one. */
  abort(jobId: number, reason: string): boolean {
    const abort = this.running.get(jobId);
    if (!abort) return false;
    this.running.delete(jobId);
    abort.abort(new Error(reason));
    this.channel.log(`cloud copy job ${jobId} stopped: ${reason}`);
    return true;
  }

  abortAll(reason: string): void {
    for (const jobId of [...this.running.keys()]) this.abort(jobId, reason);
  }

  private async carryOut(command: CloudCopyCommand, signal: AbortSignal): Promise<void> {
    const { jobId, instanceId } = command;
    let staging: string | null = null;
    try {
      staging = await mkdtemp(join(this.options.stagingRoot ?? tmpdir(), `rigmarket-cloud-${jobId}-`));
      const files = join(staging, 'files');
      await mkdir(files);
      let bytes: number;
      if (command.direction === 'to_cloud') {
        const { tar, totalBytes } = await this.driver.readArchive(instanceId, command.path, signal);
        this.channel.send({ type: 'copy_source', jobId, totalBytes });
        await runTool('tar', ['-x', '-f', '-', '--no-same-owner', '-C', files], signal, { input: tar });
        bytes = await this.rclone(command, staging, files, `${REMOTE}:${command.remotePath}`, signal);
      } else {
        this.channel.send({ type: 'copy_source', jobId, totalBytes: null });
        bytes = await this.rclone(command, staging, `${REMOTE}:${command.remotePath}`, files, signal);
        const { sink, done } = await this.driver.writeArchive(instanceId, command.path, signal);
        done.catch(() => undefined);
        await runTool('tar', ['-c', '-f', '-', '-C', files, '.'], signal, { output: sink });
        await done;
      }
      if (signal.aborted) return;
      this.channel.send({ type: 'copy_done', jobId, bytes });
    } catch (error) {
      if (!signal.aborted) this.channel.send({ type: 'copy_failed', jobId, reason: reasonOf(error) });
    } finally {
      if (staging) await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** `rclone copy from to` with the connection in its environment; resolves with the bytes it moved. */
  private async rclone(
    order: CloudCopyOrder & { jobId: number },
    staging: string,
    from: string,
    to: string,
    signal: AbortSignal,
  ): Promise<number> {
    const prefix = `RCLONE_CONFIG_${REMOTE.toUpperCase()}_`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: staging,
      [`${prefix}TYPE`]: 's3',
      [`${prefix}PROVIDER`]: 'Other',
      [`${prefix}ENDPOINT`]: order.cloud.endpoint,
      [`${prefix}REGION`]: order.cloud.region,
      [`${prefix}ACCESS_KEY_ID`]: order.cloud.accessKeyId,
      [`${prefix}SECRET_ACCESS_KEY`]: order.cloud.secretAccessKey,
      [`${prefix}FORCE_PATH_STYLE`]: 'true',
    };
    const flags = order.flags.filter((flag) => CLOUD_COPY_FLAGS.includes(flag));
    let bytes = 0;
    let lastError = '';
    const args = [
      '--config',
      join(staging, 'none.conf'),
      'copy',
      from,
      to,
      '--use-json-log',
      '--stats',
      '1s',
      '--stats-log-level',
      'NOTICE',
      ...flags,
    ];
    try {
      await runTool(this.options.rclone ?? 'rclone', args, signal, {
        env,
        onStderrLine: (line) => {
          const { bytes: now, error } = rcloneLine(line);
          if (error) lastError = error;
          if (now !== undefined && now > bytes) {
            bytes = now;
            this.channel.send({ type: 'copy_ack', jobId: order.jobId, bytes });
          }
        },
      });
    } catch (error) {
      throw lastError ? new Error(`rclone: ${lastError}`) : error;
    }
    return bytes;
  }
}
