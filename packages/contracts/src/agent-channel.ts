import { EXEC_MAX_OUTPUT_BYTES } from './instance-exec';
import type { InstanceActualStatus, InstanceConfig, InstanceIntendedStatus } from './instance';

/**
 * The agent channel (docs/adr/0010-agent-channel.md): one WebSocket per host agent, opened by the agent
 * at AGENT_CHANNEL_PATH on instance-lifecycle with the machine owner's key as bearer. Messages are JSON
 * text frames. Commands go down, reports of real transitions, heartbeats and log lines come up.
 */
export const AGENT_CHANNEL_PATH = '/api/v0/agent/channel';
export const AGENT_CHANNEL_VERSION = 1;

/** What a host needs to run an instance (instance-lifecycle's ProvisionSpec on the wire). */
export interface AgentProvisionSpec {
  instanceId: number;
  machineId: number;
  publicIpaddr: string | null;
  numGpus: number;
  config: InstanceConfig;
  targetState: InstanceIntendedStatus;
  /** Injected into the container as CONTAINER_API_KEY. */
  instanceApiKey: string;
  /** The OpenSSH public key lines for the container's /root/.ssh/authorized_keys (absent: none). */
  authorizedKeys?: string[];
}

/**
 * A snapshot to take (`vastai take snapshot`): commit the instance's container (paused while it commits when
 * `pause`), push it as `image` with `auth` (the renter's registry login: in this message only, never in an
 * event or a log line), remove the local copy, and answer snapshot_report within `timeLimitMs`.
 */
export interface AgentSnapshotRequest {
  instanceId: number;
  snapshotId: number;
  /** `registry/repo:tag`, e.g. `127.0.0.1:5000/alice/app:v2` or `docker.io/alice/app:latest`. */
  image: string;
  pause: boolean;
  auth: { username: string; password: string; serveraddress: string } | null;
  timeLimitMs: number;
}

/**
 * A backup to take before the instance's container is removed (docs/instances.md, "Instance backups"): a tar
 * of what the container changed on top of its image, its entries under `upper/`, sent up in binary backup
 * frames (BACKUP_DATA_FRAME) within COPY_WINDOW_BYTES of what instance-lifecycle acknowledged
 * (backup_ack), at most `bytesPerSecond`. Over `maxBytes`, or past `timeLimitMs`, the agent stops and
 * answers backup_failed; otherwise backup_sent. The instance's next command (its destroy) waits for it.
 */
export interface AgentBackupRequest {
  backupId: number;
  instanceId: number;
  maxBytes: number;
  timeLimitMs: number;
  bytesPerSecond: number;
}

/** An instance's desired state, as the platform's instance stream says. */
export interface AgentDesiredState {
  instanceId: number;
  state: InstanceIntendedStatus;
  /** Its authorized keys (absent from older platforms: leave the container's file as it is). */
  authorizedKeys?: string[];
}

/** A real transition as the host saw it (the HostReport the instance decider accepts). */
export interface AgentHostReport {
  actualStatus: Exclude<InstanceActualStatus, null>;
  sshHost?: string | null;
  sshPort?: number | null;
  ports?: Record<string, number>;
  statusMsg?: string | null;
}

/** One GPU as nvidia-smi saw it; null where the GPU does not say ("[N/A]", "[Not Supported]"). */
export interface AgentGpuSample {
  index: number;
  name: string;
  /** utilization.gpu, percent 0..100. */
  utilization: number | null;
  /** memory.used and memory.total, MiB. */
  memoryUsedMb: number | null;
  memoryTotalMb: number | null;
  /** temperature.gpu, degrees Celsius. */
  temperatureC: number | null;
  /** power.draw, watts. */
  powerW: number | null;
}

/** One measurement of the machine: `type` names what (`disk_write`: MB/s, `cpu_sha256`: MB/s). */
export interface AgentBenchmarkResult {
  type: string;
  value: number;
}

/** A benchmark message carries at most this many results (more are dropped). */
export const MAX_BENCHMARK_RESULTS = 8;

/** A machine reports at most this many GPUs per sample (more are dropped). */
export const MAX_SAMPLED_GPUS = 16;

/** instance-lifecycle -> agent. */
export type LifecycleToAgent =
  /** liveInstanceIds: the machine's instances not destroyed; the host removes containers of any other. */
  | {
      type: 'welcome';
      version: number;
      machineId: number;
      heartbeatIntervalMs: number;
      liveInstanceIds: number[];
      /**
       * What each live instance should be (from its stream), re-sent at every (re)connect: the agent
       * starts or stops the containers it has to match (commands still undelivered follow).
       */
      desired?: AgentDesiredState[];
    }
  | { type: 'refused'; reason: string }
  /**
   * Commands carry the id of their host_commands row (docs/adr/0012-host-commands.md): delivery is at least
   * once, and the agent ignores a command whose id is not above the last it ran for that instance.
   */
  | { type: 'provision'; commandId?: number; spec: AgentProvisionSpec }
  | { type: 'start'; commandId?: number; instanceId: number }
  | { type: 'stop'; commandId?: number; instanceId: number; statusMsg?: string }
  | { type: 'reboot'; commandId?: number; instanceId: number }
  | { type: 'recycle'; commandId?: number; instanceId: number }
  /**
   * `vastai update instance`: recreate the container from this spec (new image, env, onstart or args),
   * keeping its GPUs, volume and instance key (instanceApiKey is empty: the container's own is kept).
   */
  | { type: 'update'; commandId?: number; spec: AgentProvisionSpec }
  | { type: 'destroy'; commandId?: number; instanceId: number }
  /** The instance's authorized keys changed (attach/detach ssh): the whole list, written over the file. */
  | { type: 'ssh_keys'; commandId?: number; instanceId: number; authorizedKeys: string[] }
  | { type: 'logs'; requestId: string; instanceId: number; daemon: boolean }
  /** Run argv (parseExecCommand's) in the instance's container without a shell, bounded (instance-exec.ts); answered by `exec`. */
  | { type: 'exec'; requestId: string; instanceId: number; argv: string[] }
  | { type: 'snapshot'; commandId?: number; instanceId: number; snapshot: AgentSnapshotRequest }
  /** Stream a backup of the instance's container up the channel (AgentBackupRequest), before its destroy. */
  | { type: 'backup'; commandId?: number; instanceId: number; backup: AgentBackupRequest }
  /** instance-lifecycle has stored `bytes` of the backup so far (the window slides). */
  | { type: 'backup_ack'; backupId: number; bytes: number }
  /** Stop sending the backup (it could not be stored, or it grew over its bound). */
  | { type: 'backup_abort'; backupId: number; reason: string }
  /** To the destination's agent: get ready to extract a tar into `path` of the instance (mkdir -p), or into the volume; answer copy_ready. */
  | ({ type: 'copy_receive'; jobId: number } & CopyEndpoint)
  /** To the source's agent: stream a tar of `path` (or of the whole volume) as binary copy frames, at most bytesPerSecond, within the window. */
  | ({ type: 'copy_send'; jobId: number; bytesPerSecond: number } & CopyEndpoint)
  /** To the source's agent: the destination has extracted `bytes` so far (the window slides). */
  | { type: 'copy_ack'; jobId: number; bytes: number }
  /** To the destination's agent: the source's tar ended after `bytes`; finish the extract and answer copy_done. */
  | { type: 'copy_end'; jobId: number; bytes: number }
  /** To both: stop the transfer (canceled, or the other side failed or went away). */
  | { type: 'copy_abort'; jobId: number; reason: string }
  /**
   * To the instance's agent: a cloud copy (`vastai cloud copy`) between `path` in the instance's container and
   * `remotePath` (bucket/prefix) of an S3-compatible cloud, run with rclone on the host. The agent answers
   * copy_source (started), copy_ack (bytes so far), then copy_done or copy_failed; copy_abort stops it.
   */
  | ({ type: 'cloud_copy'; jobId: number; instanceId: number } & CloudCopyOrder);

/** One side of a copy between agents: a path in an instance's container, or the whole of a volume (`clone volume`). */
export type CopyEndpoint = { instanceId: number; path: string } | { volumeId: number };

/**
 * The channel job id of a volume's clone copy: its own range above the sync jobs' ids (2^31 and up, so a
 * volume id, at most 2^31 - 1, keeps the uint32 of the data frames).
 */
export const volumeCopyJobId = (volumeId: number): number => 0x80000000 + volumeId;

/** What the agent needs for a cloud copy. The credentials travel only down the channel, never in an event. */
export interface CloudCopyOrder {
  direction: 'to_cloud' | 'from_cloud';
  /** In the container: the source (to_cloud; a trailing '/' copies a directory's contents) or the destination directory. */
  path: string;
  /** bucket[/prefix] on the cloud: the destination (to_cloud) or the source (from_cloud). */
  remotePath: string;
  cloud: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
  /** rclone flags the renter asked for, from CLOUD_COPY_FLAGS only. */
  flags: string[];
}

/** The rclone flags `vastai cloud copy` may send (its --dry-run, --size-only, ... options); others are dropped. */
export const CLOUD_COPY_FLAGS: readonly string[] = [
  '--dry-run',
  '--size-only',
  '--ignore-existing',
  '--update',
  '--delete-excluded',
];

/** agent -> instance-lifecycle. `hello` comes first; nothing else is accepted before the welcome. */
export type AgentToLifecycle =
  | { type: 'hello'; version: number; machineId: number; driver: string }
  | { type: 'heartbeat'; machineId: number }
  /** The agent's own benchmarks of its machine (at start, then every --benchmark-interval). */
  | { type: 'benchmark'; machineId: number; results: AgentBenchmarkResult[] }
  /** One sample of every GPU of the machine (nvidia-smi), every few seconds; kept as bounded telemetry. */
  | { type: 'gpu_metrics'; machineId: number; gpus: AgentGpuSample[] }
  | { type: 'report'; instanceId: number; report: AgentHostReport }
  | { type: 'logs'; requestId: string; lines: string[]; error?: string }
  /** The output of an exec (stdout and stderr as they came, at most EXEC_MAX_OUTPUT_BYTES), or why it could not run. */
  | { type: 'exec'; requestId: string; output: string; error?: string }
  /** The snapshot's outcome: the pushed manifest's digest, or why it failed (shown to the renter). */
  | { type: 'snapshot_report'; instanceId: number; snapshotId: number; digest: string | null; error?: string }
  /** A backup's tar ended after `bytes`, all sent in binary backup frames. */
  | { type: 'backup_sent'; backupId: number; bytes: number }
  /** The backup could not be taken (no container, over its bound, time limit); `reason` is shown to the renter. */
  | { type: 'backup_failed'; backupId: number; reason: string }
  /** Destination: the container is there and the directory exists; data may come. */
  | { type: 'copy_ready'; jobId: number }
  /** Source: the path exists; the tar's size when it is a file (null for a directory). */
  | { type: 'copy_source'; jobId: number; totalBytes: number | null }
  /** Source: the tar ended; `bytes` were sent in binary frames. */
  | { type: 'copy_sent'; jobId: number; bytes: number }
  /** Destination: `bytes` (cumulative) were handed to the extract; relayed to the source as its window. */
  | { type: 'copy_ack'; jobId: number; bytes: number }
  /** Destination: the extract finished with `bytes`. */
  | { type: 'copy_done'; jobId: number; bytes: number }
  /** Either side: the transfer cannot go on; `reason` is shown to the renter. */
  | { type: 'copy_failed'; jobId: number; reason: string };

/**
 * The copy's data travels as binary frames (text frames stay JSON): one byte COPY_DATA_FRAME, the job id
 * (uint32, big-endian), then the bytes of the tar. The source sends at most COPY_WINDOW_BYTES beyond what
 * the destination acknowledged, so neither the relay nor the sockets buffer more than that per job.
 */
export const COPY_DATA_FRAME = 0x01;
export const COPY_WINDOW_BYTES = 4 * 1024 * 1024;
export const COPY_MAX_CHUNK_BYTES = 256 * 1024;

/** A backup's data (AgentBackupRequest): one byte BACKUP_DATA_FRAME, the backup id (uint32, big-endian), the bytes. */
export const BACKUP_DATA_FRAME = 0x02;

function encodeFrame(kind: number, id: number, data: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(kind, 0);
  header.writeUInt32BE(id, 1);
  return Buffer.concat([header, data]);
}

function decodeFrame(kind: number, frame: Buffer): { id: number; data: Buffer } | null {
  if (frame.length < 5 || frame.readUInt8(0) !== kind) return null;
  return { id: frame.readUInt32BE(1), data: frame.subarray(5) };
}

export function encodeCopyData(jobId: number, data: Buffer): Buffer {
  return encodeFrame(COPY_DATA_FRAME, jobId, data);
}

/** Null when the frame is not a copy data frame (the receiver drops it). */
export function decodeCopyData(frame: Buffer): { jobId: number; data: Buffer } | null {
  const decoded = decodeFrame(COPY_DATA_FRAME, frame);
  return decoded && { jobId: decoded.id, data: decoded.data };
}

export function encodeBackupData(backupId: number, data: Buffer): Buffer {
  return encodeFrame(BACKUP_DATA_FRAME, backupId, data);
}

/** Null when the frame is not a backup data frame. */
export function decodeBackupData(frame: Buffer): { backupId: number; data: Buffer } | null {
  const decoded = decodeFrame(BACKUP_DATA_FRAME, frame);
  return decoded && { backupId: decoded.id, data: decoded.data };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);
const isCount = (value: unknown): value is number => isInt(value) && value >= 0;

/** A finite number within [min, max], else null (a sample never carries anything else). */
const bounded = (value: unknown, min: number, max: number): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? value : null;

function parseGpuSample(value: unknown): AgentGpuSample | null {
  if (!isRecord(value) || !isCount(value.index) || value.index > 255 || typeof value.name !== 'string')
    return null;
  const name = value.name.trim().slice(0, 64);
  if (!name) return null;
  return {
    index: value.index,
    name,
    utilization: bounded(value.utilization, 0, 100),
    memoryUsedMb: bounded(value.memoryUsedMb, 0, 10_000_000),
    memoryTotalMb: bounded(value.memoryTotalMb, 0, 10_000_000),
    temperatureC: bounded(value.temperatureC, -50, 200),
    powerW: bounded(value.powerW, 0, 100_000),
  };
}

const REPORTABLE: readonly string[] = ['loading', 'running', 'stopped', 'exited', 'unknown', 'offline'];

/** Parses one frame from an agent; null when it is not a well-formed message (the channel drops it). */
export function parseAgentMessage(text: string): AgentToLifecycle | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  switch (value.type) {
    case 'hello':
      return isInt(value.version) && isInt(value.machineId) && typeof value.driver === 'string'
        ? { type: 'hello', version: value.version, machineId: value.machineId, driver: value.driver }
        : null;
    case 'heartbeat':
      return isInt(value.machineId) ? { type: 'heartbeat', machineId: value.machineId } : null;
    case 'benchmark': {
      if (!isInt(value.machineId) || !Array.isArray(value.results)) return null;
      const results = value.results
        .slice(0, MAX_BENCHMARK_RESULTS)
        .filter(isRecord)
        .flatMap((r) => {
          const measured = bounded(r.value, 0, 1e9);
          return typeof r.type === 'string' && /^[a-z0-9_]{1,32}$/.test(r.type) && measured !== null
            ? [{ type: r.type, value: measured }]
            : [];
        });
      return { type: 'benchmark', machineId: value.machineId, results };
    }
    case 'gpu_metrics': {
      if (!isInt(value.machineId) || !Array.isArray(value.gpus)) return null;
      const gpus = value.gpus
        .slice(0, MAX_SAMPLED_GPUS)
        .map(parseGpuSample)
        .filter((gpu): gpu is AgentGpuSample => gpu !== null);
      return { type: 'gpu_metrics', machineId: value.machineId, gpus };
    }
    case 'report': {
      const r = value.report;
      if (
        !isInt(value.instanceId) ||
        !isRecord(r) ||
        typeof r.actualStatus !== 'string' ||
        !REPORTABLE.includes(r.actualStatus)
      )
        return null;
      const ports = isRecord(r.ports)
        ? Object.fromEntries(Object.entries(r.ports).filter((e): e is [string, number] => isInt(e[1])))
        : {};
      return {
        type: 'report',
        instanceId: value.instanceId,
        report: {
          actualStatus: r.actualStatus as AgentHostReport['actualStatus'],
          sshHost: typeof r.sshHost === 'string' ? r.sshHost : null,
          sshPort: isInt(r.sshPort) ? r.sshPort : null,
          ports,
          statusMsg: typeof r.statusMsg === 'string' ? r.statusMsg : null,
        },
      };
    }
    case 'logs':
      return typeof value.requestId === 'string' && Array.isArray(value.lines)
        ? {
            type: 'logs',
            requestId: value.requestId,
            lines: value.lines.map(String),
            ...(typeof value.error === 'string' ? { error: value.error } : {}),
          }
        : null;
    case 'exec':
      return typeof value.requestId === 'string' && typeof value.output === 'string'
        ? {
            type: 'exec',
            requestId: value.requestId,
            output: value.output.slice(0, EXEC_MAX_OUTPUT_BYTES),
            ...(typeof value.error === 'string' ? { error: value.error.slice(0, 500) } : {}),
          }
        : null;
    case 'snapshot_report':
      return isInt(value.instanceId) &&
        isInt(value.snapshotId) &&
        (typeof value.digest === 'string' || typeof value.error === 'string')
        ? {
            type: 'snapshot_report',
            instanceId: value.instanceId,
            snapshotId: value.snapshotId,
            digest: typeof value.digest === 'string' ? value.digest.slice(0, 200) : null,
            ...(typeof value.error === 'string' ? { error: value.error.slice(0, 500) } : {}),
          }
        : null;
    case 'copy_ready':
      return isInt(value.jobId) ? { type: 'copy_ready', jobId: value.jobId } : null;
    case 'copy_source':
      return isInt(value.jobId) && (value.totalBytes === null || isCount(value.totalBytes))
        ? { type: 'copy_source', jobId: value.jobId, totalBytes: value.totalBytes }
        : null;
    case 'copy_sent':
    case 'copy_ack':
    case 'copy_done':
      return isInt(value.jobId) && isCount(value.bytes)
        ? { type: value.type, jobId: value.jobId, bytes: value.bytes }
        : null;
    case 'backup_sent':
      return isInt(value.backupId) && isCount(value.bytes)
        ? { type: 'backup_sent', backupId: value.backupId, bytes: value.bytes }
        : null;
    case 'backup_failed':
      return isInt(value.backupId) && typeof value.reason === 'string'
        ? { type: 'backup_failed', backupId: value.backupId, reason: value.reason.slice(0, 500) }
        : null;
    case 'copy_failed':
      return isInt(value.jobId) && typeof value.reason === 'string'
        ? { type: 'copy_failed', jobId: value.jobId, reason: value.reason.slice(0, 500) }
        : null;
    default:
      return null;
  }
}
