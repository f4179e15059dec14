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
}

/** A real transition as the host saw it (the HostReport the instance decider accepts). */
export interface AgentHostReport {
  actualStatus: Exclude<InstanceActualStatus, null>;
  sshHost?: string | null;
  sshPort?: number | null;
  ports?: Record<string, number>;
  statusMsg?: string | null;
}

/** instance-lifecycle -> agent. */
export type LifecycleToAgent =
  /** liveInstanceIds: the machine's instances not destroyed; the host removes containers of any other. */
  | { type: 'welcome'; version: number; machineId: number; heartbeatIntervalMs: number; liveInstanceIds: number[] }
  | { type: 'refused'; reason: string }
  | { type: 'provision'; spec: AgentProvisionSpec }
  | { type: 'start'; instanceId: number }
  | { type: 'stop'; instanceId: number; statusMsg?: string }
  | { type: 'reboot'; instanceId: number }
  | { type: 'recycle'; instanceId: number }
  | { type: 'destroy'; instanceId: number }
  | { type: 'logs'; requestId: string; instanceId: number; daemon: boolean };

/** agent -> instance-lifecycle. `hello` comes first; nothing else is accepted before the welcome. */
export type AgentToLifecycle =
  | { type: 'hello'; version: number; machineId: number; driver: string }
  | { type: 'heartbeat'; machineId: number }
  | { type: 'report'; instanceId: number; report: AgentHostReport }
  | { type: 'logs'; requestId: string; lines: string[]; error?: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

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
    case 'report': {
      const r = value.report;
      if (!isInt(value.instanceId) || !isRecord(r) || typeof r.actualStatus !== 'string' || !REPORTABLE.includes(r.actualStatus)) return null;
      const ports = isRecord(r.ports) ? Object.fromEntries(Object.entries(r.ports).filter((e): e is [string, number] => isInt(e[1]))) : {};
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
        ? { type: 'logs', requestId: value.requestId, lines: value.lines.map(String), ...(typeof value.error === 'string' ? { error: value.error } : {}) }
        : null;
    default:
      return null;
  }
}
