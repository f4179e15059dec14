import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  type AgentToLifecycle,
  type CloudCopyOrder,
  type CopyEndpoint,
  type EventMetadata,
  type LifecycleToAgent,
  volumeCopyJobId,
} from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { type AgentCopyCommand, agentCopyDecider, agentCopyStreamId } from './agent-copy.decider';
import { AGENT_CHANNEL_OPTIONS, type AgentChannelOptions } from './agent-channel.options';
import { isAgentMachine } from './agent-machines';
import { type AgentSession, AgentSessions } from './agent-sessions';
import { volumeCopyDecider, volumeCopyStreamId } from './volume-copy.decider';

/** A copy_direct or cloud copy job the agents are asked to carry out (from its SyncRequested). */
export interface AgentCopyJob {
  jobId: number;
  /** The destination (the instance of a cloud copy). */
  instanceId: number;
  /** The source (a cloud copy's own instance: one agent runs it). */
  srcInstanceId: number;
  srcPath: string;
  dstPath: string;
  /** A cloud copy: what its agent runs, or why it cannot run (no such connection of the owner). */
  cloud?: { order: CloudCopyOrder } | { refused: string };
}

/** A volume clone's copy (marketplace's VolumeCreated with cloneOf): the source volume's data into the new one. */
export interface VolumeCopyJob {
  volumeId: number;
  machineId: number;
  srcVolumeId: number;
  srcMachineId: number;
}

type CopyReport = Extract<AgentToLifecycle, { type: `copy_${string}` }>;

/** What happened to a transfer, recorded on its own stream (agentcopy-<jobId> or volumecopy-<volumeId>). */
type Outcome =
  | { type: 'started'; totalBytes: number | null }
  | { type: 'progressed'; bytes: number }
  | { type: 'completed'; bytes: number }
  | { type: 'failed'; reason: string }
  | { type: 'aborted' };

interface Transfer {
  /** The job id on the channel (its data frames carry it). */
  jobId: number;
  from: CopyEndpoint;
  into: CopyEndpoint;
  /** A cloud copy: one agent runs it, its acknowledgements are only progress. */
  cloud: boolean;
  /** How a failure an agent reports is shown ("Copy from instance 5 failed: ..."). */
  failure: (reason: string) => string;
  record: (outcome: Outcome) => Promise<unknown>;
  srcMachineId: number;
  dstMachineId: number;
  acked: number;
  /** The source file's size (null for a directory); the tar is a little larger, so counts are capped at it. */
  totalBytes: number | null;
  lastProgressAt: number;
  /** Outcomes recorded one after the other. */
  recording: Promise<void>;
}

type NewTransfer = Omit<Transfer, 'acked' | 'totalBytes' | 'lastProgressAt' | 'recording'>;

type AgentCopyBody = AgentCopyCommand extends infer C
  ? C extends AgentCopyCommand
    ? Omit<C, 'at' | 'jobId' | 'instanceId'>
    : never
  : never;

/** An outcome as the command on the job's agentcopy stream. */
function agentCopyCommand(outcome: Outcome, srcInstanceId: number): AgentCopyBody {
  switch (outcome.type) {
    case 'started':
      return { type: 'StartAgentCopy', srcInstanceId, totalBytes: outcome.totalBytes };
    case 'progressed':
      return { type: 'ReportAgentCopyProgress', bytesCopied: outcome.bytes };
    case 'completed':
      return { type: 'CompleteAgentCopy', bytesCopied: outcome.bytes };
    case 'failed':
      return { type: 'FailAgentCopy', reason: outcome.reason };
    case 'aborted':
      return { type: 'AbortAgentCopy' };
  }
}

const ENDED_SYNC = ['completed', 'failed', 'canceled'];
const capped = (transfer: Transfer, bytes: number): number =>
  transfer.totalBytes === null ? bytes : Math.min(bytes, transfer.totalBytes);

/**
 * Carries copies between instances of host-agent machines (docs/adr/0011-agent-copies.md), and volume clones
 * between the volumes' machines: tells the destination's agent to get ready, then the source's agent to
 * send, relays the source's binary frames to the destination and the destination's acknowledgements back to
 * the source (its window: backpressure end to end), and records what happens on the transfer's stream
 * (`agentcopy-<jobId>`, public events sync-maintenance turns into the job's progress, or
 * `volumecopy-<volumeId>`, marketplace's volume status). A cancel, a failure on either side or a
 * disconnected agent stops both sides at once. Transfers live in the process that holds both agents'
 * connections (ADR 0010's one-process limit).
 */
@Injectable()
export class AgentCopyRelay implements BeforeApplicationShutdown {
  private readonly logger = new Logger('AgentCopyRelay');
  private readonly transfers = new Map<number, Transfer>();
  /** Jobs canceled before their start reached this process. */
  private readonly canceled = new Set<number>();

  constructor(
    private readonly sessions: AgentSessions,
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(AGENT_CHANNEL_OPTIONS) private readonly options: AgentChannelOptions,
  ) {}

  /** True while this process relays the job (tests). */
  relaying(jobId: number): boolean {
    return this.transfers.has(jobId);
  }

  async start(job: AgentCopyJob, metadata: EventMetadata): Promise<void> {
    const { jobId } = job;
    if (this.transfers.has(jobId) || this.canceled.has(jobId)) return;
    const record = (outcome: Outcome | null) => this.recordJob(job, metadata, outcome);
    // Redelivered, or already over (an interrupted transfer is never resumed: the job was failed).
    if ((await record(null)) !== 'none') return;
    if (await this.syncOver(job)) return;
    const fail = (reason: string) => record({ type: 'failed', reason }).then(() => undefined);
    if (job.cloud && 'refused' in job.cloud) return fail(job.cloud.refused);
    const srcMachineId = await this.machineOf(job.srcInstanceId);
    const dstMachineId = await this.machineOf(job.instanceId);
    if (srcMachineId === null) return fail(`Source instance ${job.srcInstanceId} no longer exists`);
    if (dstMachineId === null) return fail(`Destination instance ${job.instanceId} no longer exists`);
    const refused = await this.unreachable(
      [srcMachineId, `source instance ${job.srcInstanceId}`],
      [dstMachineId, `destination instance ${job.instanceId}`],
      'copies between instances need both on host-agent machines',
      'start the copy again once it is back',
    );
    if (refused) return fail(refused);
    const transfer = this.begin({
      jobId,
      from: { instanceId: job.srcInstanceId, path: job.srcPath },
      into: { instanceId: job.instanceId, path: job.dstPath },
      cloud: Boolean(job.cloud),
      failure: (reason) =>
        job.cloud
          ? `Cloud copy failed: ${reason}`
          : `Copy from instance ${job.srcInstanceId} failed: ${reason}`,
      record,
      srcMachineId,
      dstMachineId,
    });
    if (!transfer) return;
    if (job.cloud && 'order' in job.cloud) {
      // The order carries the connection's credentials: never logged.
      this.logger.log(
        `cloud copy job ${jobId}: instance ${job.instanceId} (machine ${dstMachineId}), ${job.cloud.order.direction}`,
      );
      this.sessions.send(dstMachineId, {
        type: 'cloud_copy',
        jobId,
        instanceId: job.instanceId,
        ...job.cloud.order,
      });
      return;
    }
    this.logger.log(
      `copy job ${jobId}: instance ${job.srcInstanceId} (machine ${srcMachineId}) -> instance ${job.instanceId} (machine ${dstMachineId})`,
    );
    this.receive(transfer);
  }

  /** A cloned volume: the source volume's whole data into the new one, by the two machines' agents. */
  async startVolumeCopy(clone: VolumeCopyJob, metadata: EventMetadata): Promise<void> {
    const jobId = volumeCopyJobId(clone.volumeId);
    if (this.transfers.has(jobId)) return;
    const streamId = volumeCopyStreamId(clone.volumeId);
    const command = (outcome: Outcome) => {
      const base = { volumeId: clone.volumeId, at: this.runtime.infra.clock.now().toISOString() };
      switch (outcome.type) {
        case 'started':
          return { ...base, type: 'StartVolumeCopy' as const, srcVolumeId: clone.srcVolumeId };
        case 'completed':
          return { ...base, type: 'CompleteVolumeCopy' as const, bytesCopied: outcome.bytes };
        case 'failed':
          return { ...base, type: 'FailVolumeCopy' as const, reason: outcome.reason };
        default:
          return null; // progress and cancels are not recorded for a clone
      }
    };
    const record = async (outcome: Outcome) => {
      const body = command(outcome);
      if (body)
        await this.runtime.runner.run(streamId, volumeCopyDecider, body, {
          ...metadata,
          causationId: `volume-copy-${clone.volumeId}`,
        });
    };
    const { state } = await this.runtime.runner.load(streamId, volumeCopyDecider);
    if (state.status !== 'none') return; // redelivered: an interrupted copy is never resumed (it failed)
    const refused = await this.unreachable(
      [clone.srcMachineId, `source volume ${clone.srcVolumeId}`],
      [clone.machineId, `new volume ${clone.volumeId}`],
      'volumes are cloned between host-agent machines',
      'delete this volume and clone again once it is back',
    );
    if (refused)
      return record({ type: 'failed', reason: `Clone of volume ${clone.srcVolumeId} failed: ${refused}` });
    const transfer = this.begin({
      jobId,
      from: { volumeId: clone.srcVolumeId },
      into: { volumeId: clone.volumeId },
      cloud: false,
      failure: (reason) => `Clone of volume ${clone.srcVolumeId} failed: ${reason}`,
      record,
      srcMachineId: clone.srcMachineId,
      dstMachineId: clone.machineId,
    });
    if (!transfer) return;
    this.logger.log(
      `volume copy ${jobId}: volume ${clone.srcVolumeId} (machine ${clone.srcMachineId}) -> volume ${clone.volumeId} (machine ${clone.machineId})`,
    );
    this.receive(transfer);
  }

  /** Why the agents of these machines cannot carry the transfer out now, or null. */
  private async unreachable(
    source: readonly [number, string],
    destination: readonly [number, string],
    rule: string,
    again: string,
  ): Promise<string | null> {
    for (const [machineId, what] of [source, destination]) {
      if (!(await isAgentMachine(this.runtime.db, machineId)))
        return `The ${what} is on machine ${machineId}, which has no host agent: ${rule}`;
      if (!this.sessions.current(machineId))
        return `The host agent of machine ${machineId} (${what}) is not connected; ${again}`;
    }
    return null;
  }

  /** Holds the new transfer (null when one runs, or it was canceled, meanwhile). */
  private begin(fields: NewTransfer): Transfer | null {
    if (this.transfers.has(fields.jobId) || this.canceled.has(fields.jobId)) return null;
    const transfer: Transfer = {
      ...fields,
      acked: 0,
      totalBytes: null,
      lastProgressAt: Date.now(),
      recording: Promise.resolve(),
    };
    this.transfers.set(fields.jobId, transfer);
    return transfer;
  }

  private receive(transfer: Transfer): void {
    this.sessions.send(transfer.dstMachineId, {
      type: 'copy_receive',
      jobId: transfer.jobId,
      ...transfer.into,
    });
  }

  /** The job was canceled: both agents stop at once; a canceled job never resumes. */
  async cancel(jobId: number): Promise<void> {
    this.canceled.add(jobId);
    const transfer = this.transfers.get(jobId);
    if (!transfer) return;
    this.end(transfer, { type: 'copy_abort', jobId, reason: 'the copy was canceled' });
    this.enqueue(transfer, { type: 'aborted' });
    await transfer.recording;
  }

  /** A copy report from an agent; only the side the job gave that machine is listened to. */
  fromAgent(session: AgentSession, message: CopyReport): void {
    const transfer = this.transfers.get(message.jobId);
    if (!transfer) return;
    const { jobId } = transfer;
    const fromSource = session.machineId === transfer.srcMachineId;
    const fromDestination = session.machineId === transfer.dstMachineId;
    switch (message.type) {
      case 'copy_ready':
        if (!fromDestination) return;
        this.sessions.send(transfer.srcMachineId, {
          type: 'copy_send',
          jobId,
          bytesPerSecond: this.options.copyBytesPerSecond,
          ...transfer.from,
        });
        return;
      case 'copy_source':
        if (!fromSource) return;
        transfer.totalBytes = message.totalBytes;
        this.enqueue(transfer, { type: 'started', totalBytes: message.totalBytes });
        return;
      case 'copy_sent':
        if (!fromSource) return;
        this.sessions.send(transfer.dstMachineId, { type: 'copy_end', jobId, bytes: message.bytes });
        return;
      case 'copy_ack': {
        if (!fromDestination) return;
        transfer.acked = Math.max(transfer.acked, message.bytes);
        // A cloud copy's acknowledgements are only its progress (one agent, no window to slide).
        if (!transfer.cloud)
          this.sessions.send(transfer.srcMachineId, { type: 'copy_ack', jobId, bytes: transfer.acked });
        const now = Date.now();
        if (now - transfer.lastProgressAt >= this.options.copyProgressIntervalMs) {
          transfer.lastProgressAt = now;
          this.enqueue(transfer, { type: 'progressed', bytes: capped(transfer, transfer.acked) });
        }
        return;
      }
      case 'copy_done':
        if (!fromDestination) return;
        this.end(transfer);
        this.enqueue(transfer, {
          type: 'completed',
          // rclone's own count for a cloud copy; the tar's, capped at the file's size, between instances
          bytes: transfer.cloud ? message.bytes : (transfer.totalBytes ?? message.bytes),
        });
        return;
      case 'copy_failed':
        if (!fromSource && !fromDestination) return;
        this.end(transfer, { type: 'copy_abort', jobId, reason: `the other side failed: ${message.reason}` });
        this.enqueue(transfer, { type: 'failed', reason: transfer.failure(message.reason) });
        return;
    }
  }

  /** A binary frame of the source's tar: on to the destination's agent. */
  data(session: AgentSession, jobId: number, frame: Buffer): void {
    const transfer = this.transfers.get(jobId);
    if (!transfer || session.machineId !== transfer.srcMachineId) return;
    const destination = this.sessions.current(transfer.dstMachineId);
    destination?.sendBinary(frame);
  }

  /** An agent's connection closed: its transfers fail and the other sides stop. */
  agentGone(machineId: number): void {
    for (const transfer of [...this.transfers.values()]) {
      if (transfer.srcMachineId !== machineId && transfer.dstMachineId !== machineId) continue;
      const reason = `the host agent of machine ${machineId} disconnected during the copy; start the copy again`;
      this.end(transfer, { type: 'copy_abort', jobId: transfer.jobId, reason });
      this.enqueue(transfer, { type: 'failed', reason: transfer.failure(reason) });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    const open = [...this.transfers.values()];
    for (const transfer of open) {
      this.end(transfer, {
        type: 'copy_abort',
        jobId: transfer.jobId,
        reason: 'instance-lifecycle is stopping',
      });
      this.enqueue(transfer, {
        type: 'failed',
        reason: 'Interrupted: instance-lifecycle stopped during the copy; start the copy again',
      });
    }
    await Promise.allSettled(open.map((t) => t.recording));
  }

  /** Forgets the transfer and tells both agents to stop (when given an abort). */
  private end(transfer: Transfer, abort?: LifecycleToAgent): void {
    if (this.transfers.get(transfer.jobId) !== transfer) return;
    this.transfers.delete(transfer.jobId);
    if (!abort) return;
    this.sessions.send(transfer.srcMachineId, abort);
    if (transfer.dstMachineId !== transfer.srcMachineId) this.sessions.send(transfer.dstMachineId, abort);
  }

  private enqueue(transfer: Transfer, outcome: Outcome): void {
    transfer.recording = transfer.recording
      .then(() => transfer.record(outcome))
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn(`copy job ${transfer.jobId}: could not record ${outcome.type}: ${String(error)}`),
      );
  }

  /**
   * Records an outcome on the job's agentcopy stream (or only reads it, with null); returns the status
   * after it.
   */
  private async recordJob(
    job: AgentCopyJob,
    metadata: EventMetadata,
    outcome: Outcome | null,
  ): Promise<string> {
    const streamId = agentCopyStreamId(job.jobId);
    const command = outcome && agentCopyCommand(outcome, job.srcInstanceId);
    const result = command
      ? await this.runtime.runner.run(
          streamId,
          agentCopyDecider,
          { ...command, jobId: job.jobId, instanceId: job.instanceId },
          { ...metadata, causationId: `agent-copy-${job.jobId}` },
        )
      : await this.runtime.runner.load(streamId, agentCopyDecider);
    return result.state.status;
  }

  /** What this context has projected of the job: a job already over (canceled meanwhile) is not started. */
  private async syncOver(job: AgentCopyJob): Promise<boolean> {
    const rows = await this.runtime.db.query<{ job_id: number; status: string }>(
      `SELECT job_id, status FROM ${SCHEMA}.instance_syncs WHERE instance_id = $1`,
      [job.instanceId],
    );
    const row = rows[0];
    if (!row) return false;
    return (
      Number(row.job_id) > job.jobId || (Number(row.job_id) === job.jobId && ENDED_SYNC.includes(row.status))
    );
  }

  private async machineOf(instanceId: number): Promise<number | null> {
    const rows = await this.runtime.db.query<{ machine_id: number }>(
      `SELECT machine_id FROM ${SCHEMA}.instances WHERE instance_id = $1 AND NOT destroyed`,
      [instanceId],
    );
    return rows[0] ? Number(rows[0].machine_id) : null;
  }
}
