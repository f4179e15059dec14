import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiError, type LifecycleToAgent } from '@rigmarket/contracts';
import { metricsRegistry } from '@rigmarket/event-sourcing';
import { Gauge } from 'prom-client';

/** The session tables of this process (one per running instance-lifecycle context; removed at shutdown). */
const liveSessions = new Set<AgentSessions>();

new Gauge({
  name: 'rigmarket_agent_connections',
  help: 'Host agents connected to this process (one per machine served)',
  registers: [metricsRegistry],
  collect() {
    this.set([...liveSessions].reduce((n, s) => n + s.all().length, 0));
  },
});

/** One connected agent, serving one machine. */
export interface AgentSession {
  machineId: number;
  userId: number;
  send(message: LifecycleToAgent): void;
  /** A binary frame (a copy's data). */
  sendBinary(frame: Buffer): void;
  close(code: number, reason: string): void;
  lastHeartbeatAt: number;
  /** Set once its instances were marked unknown for silence, until it heartbeats again. */
  silent: boolean;
}

/**
 * Which machines a connected host agent serves, in this process, and which ones an agent ever served
 * (their commands never fall back to the simulated host).
 */
@Injectable()
export class AgentSessions {
  private readonly sessions = new Map<number, AgentSession>();
  private readonly everServed = new Set<number>();
  private readonly pendingLogs = new Map<
    string,
    { resolve(lines: string[]): void; reject(error: Error): void; timer: NodeJS.Timeout }
  >();

  constructor() {
    liveSessions.add(this);
  }

  attach(session: AgentSession): void {
    const previous = this.sessions.get(session.machineId);
    this.sessions.set(session.machineId, session);
    this.everServed.add(session.machineId);
    if (previous && previous !== session)
      previous.close(4409, 'replaced by a newer connection for this machine');
  }

  /** False when a newer session had already replaced this one. */
  detach(session: AgentSession): boolean {
    if (this.sessions.get(session.machineId) !== session) return false;
    this.sessions.delete(session.machineId);
    return true;
  }

  current(machineId: number): AgentSession | undefined {
    return this.sessions.get(machineId);
  }

  all(): AgentSession[] {
    return [...this.sessions.values()];
  }

  /** An agent served this machine since this process started (agent-machines.ts keeps it across restarts). */
  servedHere(machineId: number): boolean {
    return this.everServed.has(machineId);
  }

  markServed(machineId: number): void {
    this.everServed.add(machineId);
  }

  send(machineId: number, message: LifecycleToAgent): boolean {
    const session = this.sessions.get(machineId);
    if (!session) return false;
    session.send(message);
    return true;
  }

  requestLogs(machineId: number, instanceId: number, daemon: boolean, timeoutMs: number): Promise<string[]> {
    const requestId = randomUUID();
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingLogs.delete(requestId);
        reject(
          new ApiError(
            504,
            'host_timeout',
            `The host agent of machine ${machineId} did not send the logs in time; retry`,
          ),
        );
      }, timeoutMs);
      timer.unref();
      this.pendingLogs.set(requestId, { resolve, reject, timer });
      if (!this.send(machineId, { type: 'logs', requestId, instanceId, daemon })) {
        clearTimeout(timer);
        this.pendingLogs.delete(requestId);
        reject(
          new ApiError(
            503,
            'host_unreachable',
            `The host agent of machine ${machineId} is not connected; retry later`,
          ),
        );
      }
    });
  }

  logsArrived(requestId: string, lines: string[], error?: string): void {
    const pending = this.pendingLogs.get(requestId);
    if (!pending) return;
    this.pendingLogs.delete(requestId);
    clearTimeout(pending.timer);
    if (error)
      pending.reject(new ApiError(502, 'host_error', `The host agent could not read the logs: ${error}`));
    else pending.resolve(lines);
  }

  closeAll(): void {
    for (const session of this.sessions.values()) session.close(1001, 'instance-lifecycle is shutting down');
    this.sessions.clear();
    for (const pending of this.pendingLogs.values()) clearTimeout(pending.timer);
    this.pendingLogs.clear();
    liveSessions.delete(this);
  }
}
