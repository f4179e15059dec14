import type { AgentCopyEvent, HostAgentEvent } from '@rigmarket/contracts';

/**
 * `agentcopy-<jobId>`: a copy between two instances carried out by their host agents, as instance-lifecycle
 * relayed it (docs/adr/0011-agent-copies.md). It starts when the source agent has found the path, moves
 * forward with the destination's acknowledgements, and ends once: completed, failed or aborted (the job was
 * canceled). After the end every report is ignored, so a late frame of an aborted transfer changes nothing.
 */
export type AgentCopyStatus = 'none' | 'running' | 'completed' | 'failed' | 'aborted';

export interface AgentCopyState {
  status: AgentCopyStatus;
  bytesCopied: number;
  totalBytes: number | null;
}

export type AgentCopyCommand = { jobId: number; instanceId: number; at: string } & (
  | { type: 'StartAgentCopy'; srcInstanceId: number; totalBytes: number | null }
  | { type: 'ReportAgentCopyProgress'; bytesCopied: number }
  | { type: 'CompleteAgentCopy'; bytesCopied: number }
  | { type: 'FailAgentCopy'; reason: string }
  | { type: 'AbortAgentCopy' }
);

export const agentCopyStreamId = (jobId: number): string => `agentcopy-${jobId}`;

const ENDED: readonly AgentCopyStatus[] = ['completed', 'failed', 'aborted'];
export const agentCopyEnded = (state: AgentCopyState): boolean => ENDED.includes(state.status);

export function initialState(): AgentCopyState {
  return { status: 'none', bytesCopied: 0, totalBytes: null };
}

export function evolve(state: AgentCopyState, event: AgentCopyEvent): AgentCopyState {
  switch (event.type) {
    case 'AgentCopyStarted':
      return { ...state, status: 'running', totalBytes: event.data.totalBytes };
    case 'AgentCopyProgressed':
      return { ...state, bytesCopied: event.data.bytesCopied, totalBytes: event.data.totalBytes };
    case 'AgentCopyCompleted':
      return { ...state, status: 'completed', bytesCopied: event.data.bytesCopied };
    case 'AgentCopyFailed':
      return { ...state, status: 'failed' };
    case 'AgentCopyAborted':
      return { ...state, status: 'aborted' };
    default:
      return state;
  }
}

export function decide(command: AgentCopyCommand, state: AgentCopyState): AgentCopyEvent[] {
  if (agentCopyEnded(state)) return [];
  const { jobId, instanceId, at } = command;
  switch (command.type) {
    case 'StartAgentCopy':
      if (state.status !== 'none') return [];
      return [
        {
          type: 'AgentCopyStarted',
          data: {
            jobId,
            instanceId,
            srcInstanceId: command.srcInstanceId,
            totalBytes: command.totalBytes,
            at,
          },
        },
      ];
    case 'ReportAgentCopyProgress':
      if (state.status !== 'running' || command.bytesCopied <= state.bytesCopied) return [];
      return [
        {
          type: 'AgentCopyProgressed',
          data: { jobId, instanceId, bytesCopied: command.bytesCopied, totalBytes: state.totalBytes, at },
        },
      ];
    case 'CompleteAgentCopy':
      if (state.status !== 'running') return [];
      return [
        { type: 'AgentCopyCompleted', data: { jobId, instanceId, bytesCopied: command.bytesCopied, at } },
      ];
    case 'FailAgentCopy':
      return [{ type: 'AgentCopyFailed', data: { jobId, instanceId, reason: command.reason, at } }];
    case 'AbortAgentCopy':
      return [{ type: 'AgentCopyAborted', data: { jobId, instanceId, bytesCopied: state.bytesCopied, at } }];
    default:
      return [];
  }
}

/**
 * The stream grows with use (a long copy adds a progress event about every second), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const agentCopyDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };

/** `hostagent-<machineId>`: the machine is served by a host agent, recorded once (its first accepted hello). */
export type HostAgentCommand = {
  type: 'EnrollHostAgent';
  machineId: number;
  ownerId: number;
  driver: string;
  at: string;
};
export const hostAgentStreamId = (machineId: number): string => `hostagent-${machineId}`;

export const hostAgentDecider = {
  initialState: (): { enrolled: boolean } => ({ enrolled: false }),
  evolve: (state: { enrolled: boolean }, event: HostAgentEvent): { enrolled: boolean } =>
    event.type === 'HostAgentEnrolled' ? { enrolled: true } : state,
  decide: (command: HostAgentCommand, state: { enrolled: boolean }): HostAgentEvent[] =>
    state.enrolled
      ? []
      : [
          {
            type: 'HostAgentEnrolled',
            data: {
              machineId: command.machineId,
              ownerId: command.ownerId,
              driver: command.driver,
              at: command.at,
            },
          },
        ],
};
