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

/**
 * `volumecopy-<volumeId>`: the data of a cloned volume (`vastai clone volume`, marketplace's VolumeCreated
 * with cloneOf) copied by the host agents of the two volumes' machines over the agent channel, as
 * instance-lifecycle relayed it. `volumeId` is the new volume, `srcVolumeId` the one it copies. Ends once:
 * completed or failed. Marketplace shows it as the volume's status (`show volumes`).
 */
export type VolumeCopyStarted = DomainEvent<
  'VolumeCopyStarted',
  { volumeId: number; srcVolumeId: number; at: string }
>;
export type VolumeCopyCompleted = DomainEvent<
  'VolumeCopyCompleted',
  { volumeId: number; bytesCopied: number; at: string }
>;
export type VolumeCopyFailed = DomainEvent<
  'VolumeCopyFailed',
  { volumeId: number; reason: string; at: string }
>;
export type VolumeCopyEvent = VolumeCopyStarted | VolumeCopyCompleted | VolumeCopyFailed;

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
  VolumeCopyStarted: { schemaVersion: 1, streamType: 'volumecopy' },
  VolumeCopyCompleted: { schemaVersion: 1, streamType: 'volumecopy' },
  VolumeCopyFailed: { schemaVersion: 1, streamType: 'volumecopy' },
} as const;
