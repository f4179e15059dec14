import type { DomainEvent } from './envelope';

/**
 * Public events of instance-lifecycle about its host agents (docs/adr/0011-agent-copies.md).
 *
 * `hostagent-<machineId>`: the machine is served by a host agent (recorded once, at its first accepted
 * hello). sync-maintenance projects it to leave copies between such machines' instances to the agents.
 */
export type HostAgentEnrolled = DomainEvent<
  'HostAgentEnrolled',
  { machineId: number; ownerId: number; driver: string; at: string }
>;

/**
 * `agentcopy-<jobId>`: a copy_direct job carried out by the host agents over the agent channel, as
 * instance-lifecycle relayed it. `instanceId` is the destination (the job's `sync-<instanceId>`).
 * sync-maintenance turns these into its StartSync / ReportProgress / CompleteSync / FailSync commands.
 * Byte counts are of the tar stream the destination agent extracted.
 */
export type AgentCopyStarted = DomainEvent<
  'AgentCopyStarted',
  { jobId: number; instanceId: number; srcInstanceId: number; totalBytes: number | null; at: string }
>;
export type AgentCopyProgressed = DomainEvent<
  'AgentCopyProgressed',
  { jobId: number; instanceId: number; bytesCopied: number; totalBytes: number | null; at: string }
>;
export type AgentCopyCompleted = DomainEvent<
  'AgentCopyCompleted',
  { jobId: number; instanceId: number; bytesCopied: number; at: string }
>;
export type AgentCopyFailed = DomainEvent<
  'AgentCopyFailed',
  { jobId: number; instanceId: number; reason: string; at: string }
>;
/** The job was canceled: the agents were told to stop (the sync stream already says canceled). */
export type AgentCopyAborted = DomainEvent<
  'AgentCopyAborted',
  { jobId: number; instanceId: number; bytesCopied: number; at: string }
>;

export type HostAgentEvent = HostAgentEnrolled;
export type AgentCopyEvent =
  AgentCopyStarted | AgentCopyProgressed | AgentCopyCompleted | AgentCopyFailed | AgentCopyAborted;

export const HostAgentPublicEvents = {
  HostAgentEnrolled: { schemaVersion: 1, streamType: 'hostagent' },
  AgentCopyStarted: { schemaVersion: 1, streamType: 'agentcopy' },
  AgentCopyProgressed: { schemaVersion: 1, streamType: 'agentcopy' },
  AgentCopyCompleted: { schemaVersion: 1, streamType: 'agentcopy' },
  AgentCopyFailed: { schemaVersion: 1, streamType: 'agentcopy' },
  AgentCopyAborted: { schemaVersion: 1, streamType: 'agentcopy' },
} as const;
