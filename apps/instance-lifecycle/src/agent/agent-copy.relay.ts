import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { AgentToLifecycle, CloudCopyOrder, EventMetadata, LifecycleToAgent } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { type AgentCopyCommand, agentCopyDecider, agentCopyStreamId } from './agent-copy.decider';
import { AGENT_CHANNEL_OPTIONS, type AgentChannelOptions } from './agent-channel.options';
import { isAgentMachine } from './agent-machines';
import { type AgentSession, AgentSessions } from './agent-sessions';

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

type CopyReport = Extract<AgentToLifecycle, { type: `copy_${string}` }>;
type CopyCommandBody = AgentCopyCommand extends infer C
  ? C extends AgentCopyCommand
    ? Omit<C, 'at' | 'jobId' | 'instanceId'>
    : never
  : never;

interface Transfer {
  job: AgentCopyJob;
  srcMachineId: number;
  dstMachineId: number;
  metadata: EventMetadata;
  acked: number;
  /** The source file's size (null for a directory); the tar is a little larger, so counts are capped at it. */
  totalBytes: number | null;
  lastProgressAt: number;
  /** Commands on the job's agentcopy stream, one after the other. */
  recording: Promise<void>;
}

const ENDED_SYNC = ['completed', 'failed', 'canceled'];
const capped = (transfer: Transfer, bytes: number): number =>
  transfer.totalBytes === null ? bytes : Math.min(bytes, transfer.totalBytes);

/**
 * Carries copies between instances of host-agent machines (docs/adr/0011-agent-copies.md): tells the
 * destination's agent to get ready, then the source's agent to send, relays the source's binary frames to
 * the destination and the destination's acknowledgements back to the source (its window: backpressure end
 * to end), and records what happens on `agentcopy-<jobId>` (public events sync-maintenance turns into the
 * job's progress). A cancel, a failure on either side or a disconnected agent stops both sides at once.
 * Transfers live in the process that holds both agents' connections (ADR 0010's one-process limit).
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
    // Redelivered, or already over (an interrupted transfer is never resumed: the job was failed).
    const current = await this.record(job, metadata, null);
    if (current !== 'none') return;
    if (await this.syncOver(job)) return;
    const fail = (reason: string) =>
      this.record(job, metadata, { type: 'FailAgentCopy', reason }).then(() => undefined);
    if (job.cloud && 'refused' in job.cloud) return fail(job.cloud.refused);
    const srcMachineId = await this.machineOf(job.srcInstanceId);
    const dstMachineId = await this.machineOf(job.instanceId);
    if (srcMachineId === null) return fail(`Source instance ${job.srcInstanceId} no longer exists`);
    if (dstMachineId === null) return fail(`Destination instance ${job.instanceId} no longer exists`);
    for (const [machineId, role, instanceId] of [
      [srcMachineId, 'source', job.srcInstanceId],
      [dstMachineId, 'destination', job.instanceId],
    ] as const) {
      if (!(await isAgentMachine(this.runtime.db, machineId))) {
        return fail(
          `The ${role} instance ${instanceId} runs on machine ${machineId}, which has no host agent: copies between instances need both on host-agent machines`,
        );
      }
      if (!this.sessions.current(machineId))
        return fail(
          `The host agent of machine ${machineId} (${role} instance ${instanceId}) is not connected; start the copy again once it is back`,
        );
    }
    if (this.transfers.has(jobId) || this.canceled.has(jobId)) return;
    this.transfers.set(jobId, {
      job,
      srcMachineId,
      dstMachineId,
      metadata,
      acked: 0,
      totalBytes: null,
      lastProgressAt: Date.now(),
      recording: Promise.resolve(),
    });
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
    this.sessions.send(dstMachineId, {
      type: 'copy_receive',
      jobId,
      instanceId: job.instanceId,
      path: job.dstPath,
    });
  }

  /** The job was canceled: both agents stop at once; a canceled job never resumes. */
  async cancel(jobId: number): Promise<void> {
    this.canceled.add(jobId);
    const transfer = this.transfers.get(jobId);
    if (!transfer) return;
    this.end(transfer, { type: 'copy_abort', jobId, reason: 'the copy was canceled' });
    this.enqueue(transfer, { type: 'AbortAgentCopy' });
    await transfer.recording;
  }

  /** A copy report from an agent; only the side the job gave that machine is listened to. */
  fromAgent(session: AgentSession, message: CopyReport): void {
    const transfer = this.transfers.get(message.jobId);
    if (!transfer) return;
    const { job } = transfer;
    const fromSource = session.machineId === transfer.srcMachineId;
    const fromDestination = session.machineId === transfer.dstMachineId;
    switch (message.type) {
      case 'copy_ready':
        if (!fromDestination) return;
        this.sessions.send(transfer.srcMachineId, {
          type: 'copy_send',
          jobId: job.jobId,
          instanceId: job.srcInstanceId,
          path: job.srcPath,
          bytesPerSecond: this.options.copyBytesPerSecond,
        });
        return;
      case 'copy_source':
        if (!fromSource) return;
        transfer.totalBytes = message.totalBytes;
        this.enqueue(transfer, {
          type: 'StartAgentCopy',
          srcInstanceId: job.srcInstanceId,
          totalBytes: message.totalBytes,
        });
        return;
      case 'copy_sent':
        if (!fromSource) return;
        this.sessions.send(transfer.dstMachineId, {
          type: 'copy_end',
          jobId: job.jobId,
          bytes: message.bytes,
        });
        return;
      case 'copy_ack': {
        if (!fromDestination) return;
        transfer.acked = Math.max(transfer.acked, message.bytes);
        // A cloud copy's acknowledgements are only its progress (one agent, no window to slide).
        if (!job.cloud)
          this.sessions.send(transfer.srcMachineId, {
            type: 'copy_ack',
            jobId: job.jobId,
            bytes: transfer.acked,
          });
        const now = Date.now();
        if (now - transfer.lastProgressAt >= this.options.copyProgressIntervalMs) {
          transfer.lastProgressAt = now;
          this.enqueue(transfer, {
            type: 'ReportAgentCopyProgress',
            bytesCopied: capped(transfer, transfer.acked),
          });
        }
        return;
      }
      case 'copy_done':
        if (!fromDestination) return;
        this.end(transfer);
        this.enqueue(transfer, {
          type: 'CompleteAgentCopy',
          // rclone's own count for a cloud copy; the tar's, capped at the file's size, between instances
          bytesCopied: job.cloud ? message.bytes : (transfer.totalBytes ?? message.bytes),
        });
        return;
      case 'copy_failed':
        if (!fromSource && !fromDestination) return;
        this.end(transfer, {
          type: 'copy_abort',
          jobId: job.jobId,
          reason: `the other side failed: ${message.reason}`,
        });
        this.enqueue(transfer, {
          type: 'FailAgentCopy',
          reason: job.cloud
            ? `Cloud copy failed: ${message.reason}`
            : `Copy from instance ${job.srcInstanceId} failed: ${message.reason}`,
        });
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
      this.end(transfer, { type: 'copy_abort', jobId: transfer.job.jobId, reason });
      this.enqueue(transfer, {
        type: 'FailAgentCopy',
        reason: `Copy from instance ${transfer.job.srcInstanceId} failed: ${reason}`,
      });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    const open = [...this.transfers.values()];
    for (const transfer of open) {
      this.end(transfer, {
        type: 'copy_abort',
        jobId: transfer.job.jobId,
        reason: 'instance-lifecycle is stopping',
      });
      this.enqueue(transfer, {
        type: 'FailAgentCopy',
        reason: 'Interrupted: instance-lifecycle stopped during the copy; start the copy again',
      });
    }
    await Promise.allSettled(open.map((t) => t.recording));
  }

  /** Forgets the transfer and tells both agents to stop (when given an abort). */
  private end(transfer: Transfer, abort?: LifecycleToAgent): void {
    if (this.transfers.get(transfer.job.jobId) !== transfer) return;
    this.transfers.delete(transfer.job.jobId);
    if (!abort) return;
    this.sessions.send(transfer.srcMachineId, abort);
    if (transfer.dstMachineId !== transfer.srcMachineId) this.sessions.send(transfer.dstMachineId, abort);
  }

  private enqueue(transfer: Transfer, command: CopyCommandBody): void {
    transfer.recording = transfer.recording
      .then(() => this.record(transfer.job, transfer.metadata, command))
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn(
          `copy job ${transfer.job.jobId}: could not record ${command.type}: ${String(error)}`,
        ),
      );
  }

  /** Runs a command on the job's agentcopy stream (or only reads it, with null); returns the status after it. */
  private async record(
    job: AgentCopyJob,
    metadata: EventMetadata,
    command: CopyCommandBody | null,
  ): Promise<string> {
    const streamId = agentCopyStreamId(job.jobId);
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
