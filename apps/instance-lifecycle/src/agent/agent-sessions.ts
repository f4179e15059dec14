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
  /** Requests (logs, exec) waiting for their agent's answer, by requestId. */
  private readonly pending = new Map<
    string,
    {
      resolve(value: string[] | string): void;
      reject(error: Error): void;
      timer: NodeJS.Timeout;
      what: string;
    }
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
    return this.ask<string[]>(
      machineId,
      (requestId) => ({ type: 'logs', requestId, instanceId, daemon }),
      'the logs',
      timeoutMs,
    );
  }

  /** `vastai execute`: the agent runs argv in the instance's container and answers its output. */
  requestExec(machineId: number, instanceId: number, argv: string[], timeoutMs: number): Promise<string> {
    return this.ask<string>(
      machineId,
      (requestId) => ({ type: 'exec', requestId, instanceId, argv }),
      'the command output',
      timeoutMs,
    );
  }

  logsArrived(requestId: string, lines: string[], error?: string): void {
    this.answered(requestId, lines, error);
  }

  execArrived(requestId: string, output: string, error?: string): void {
    this.answered(requestId, output, error);
  }

  /** Sends a request the agent answers with the same requestId; 503 when it is not connected, 504 after timeoutMs. */
  private ask<T extends string[] | string>(
    machineId: number,
    message: (requestId: string) => LifecycleToAgent,
    what: string,
    timeoutMs: number,
  ): Promise<T> {
    const requestId = randomUUID();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(
          new ApiError(
            504,
            'host_timeout',
            `The host agent of machine ${machineId} did not send ${what} in time; retry`,
          ),
        );
      }, timeoutMs);
      timer.unref();
      this.pending.set(requestId, {
        resolve: (value) => resolve(value as T),
        reject,
        timer,
        what,
      });
      if (!this.send(machineId, message(requestId))) {
        clearTimeout(timer);
        this.pending.delete(requestId);
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

  private answered(requestId: string, value: string[] | string, error?: string): void {
    const pending = this.pending.get(requestId);
    if (!pending) return;
    this.pending.delete(requestId);
    clearTimeout(pending.timer);
    if (error)
      pending.reject(
        new ApiError(502, 'host_error', `The host agent could not send ${pending.what}: ${error}`),
      );
    else pending.resolve(value);
  }

  closeAll(): void {
    for (const session of this.sessions.values()) session.close(1001, 'instance-lifecycle is shutting down');
    this.sessions.clear();
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    this.pending.clear();
    liveSessions.delete(this);
  }
}
