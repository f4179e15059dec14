export const AGENT_CHANNEL_OPTIONS = Symbol('AGENT_CHANNEL_OPTIONS');

/** How instance-lifecycle judges its host agents (docs/instances.md, "Host agents"). */
export interface AgentChannelOptions {
  /** Told to the agent in the welcome: how often it heartbeats on the channel. */
  heartbeatIntervalMs: number;
  /** No heartbeat for this long: the machine's instances become `unknown`. */
  heartbeatTimeoutMs: number;
  /** Disconnected and not back within this: the machine's instances become `offline`. */
  offlineGraceMs: number;
  /** How long a hello waits for the machine to reach this context's read model (it is registered just before). */
  helloWaitMs: number;
  /** How long a logs request waits for the agent's answer. */
  logsTimeoutMs: number;
  /** The rate a source agent sends a copy at (a copy must not eat the instances' network or disk). */
  copyBytesPerSecond: number;
  /** How often a copy's progress is recorded (each record is an event). */
  copyProgressIntervalMs: number;
}

const fromEnv = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

export function agentChannelOptions(overrides: Partial<AgentChannelOptions> = {}): AgentChannelOptions {
  return {
    heartbeatIntervalMs: fromEnv('RIGMARKET_AGENT_HEARTBEAT_MS', 10_000),
    heartbeatTimeoutMs: fromEnv('RIGMARKET_AGENT_UNKNOWN_AFTER_MS', 60_000),
    offlineGraceMs: fromEnv('RIGMARKET_AGENT_OFFLINE_AFTER_MS', 30_000),
    helloWaitMs: 15_000,
    logsTimeoutMs: 10_000,
    copyBytesPerSecond: fromEnv('RIGMARKET_AGENT_COPY_BYTES_PER_SECOND', 50 * 1024 * 1024),
    copyProgressIntervalMs: 2_000,
    ...overrides,
  };
}
