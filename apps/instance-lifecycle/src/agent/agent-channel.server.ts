import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  AGENT_CHANNEL_PATH,
  AGENT_CHANNEL_VERSION,
  type AgentToLifecycle,
  type InstanceActualStatus,
  type LifecycleToAgent,
  type InstanceIntendedStatus,
  decodeBackupData,
  decodeCopyData,
  parseAgentMessage,
  scopeAllows,
} from '@rigmarket/contracts';
import { BackgroundWork, type ContextRuntime } from '@rigmarket/event-sourcing';
import { AUTH_KEY_LOOKUP, type AuthKeyLookup, type AuthenticatedKey } from '@rigmarket/http-kit';
import { type WebSocket, WebSocketServer } from 'ws';
import { benchmarkDecider, benchmarkStreamId } from '../benchmarks/benchmark.decider';
import { GpuMetricsStore } from '../gpu-metrics/gpu-metrics.store';
import { HostReporter } from '../host/host-reporter';
import { type InstanceDetails, authorizedKeys } from '../read-models/instances/projection';
import { findMachine } from '../read-models/market-machines/queries';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AGENT_CHANNEL_OPTIONS, type AgentChannelOptions } from './agent-channel.options';
import { BackupReceiver } from '../backups/backup-receiver';
import { AgentCopyRelay } from './agent-copy.relay';
import { hostAgentDecider, hostAgentStreamId } from './agent-copy.decider';
import { rememberAgentMachine } from './agent-machines';
import { type AgentSession, AgentSessions } from './agent-sessions';

/** The bearer of an upgrade request: `Authorization: Bearer <key>` or `?api_key=`. */
export function upgradeBearer(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  if (match?.[1]) return match[1].trim();
  const query = new URL(request.url ?? '/', 'http://agent').searchParams.get('api_key');
  return query || undefined;
}

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

const NOT_DEAD = `(actual_status IS NULL OR actual_status NOT IN ('exited', 'unknown', 'offline'))`;

/**
 * The agent channel (ADR 0010): a WebSocket endpoint on instance-lifecycle's HTTP server. The agent
 * authenticates with its owner's key (machine_write), says hello for one machine it owns, then receives
 * commands and sends reports, heartbeats and logs. Silence -> unknown; disconnection -> offline.
 */
@Injectable()
export class AgentChannelServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AgentChannel');
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  private readonly offlineTimers = new Map<number, NodeJS.Timeout>();
  private watchdog: NodeJS.Timeout | undefined;
  private closing = false;
  /** Agents' messages being handled, watchdog passes, offline marks: shutdown waits for them. */
  private readonly work = new BackgroundWork();
  private readonly onUpgrade: UpgradeListener = (request, socket, head) =>
    void this.upgrade(request, socket, head);
  private server: Server | undefined;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly sessions: AgentSessions,
    private readonly reporter: HostReporter,
    private readonly copies: AgentCopyRelay,
    private readonly backups: BackupReceiver,
    private readonly gpuMetrics: GpuMetricsStore,
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(AUTH_KEY_LOOKUP) private readonly keys: AuthKeyLookup,
    @Inject(AGENT_CHANNEL_OPTIONS) private readonly options: AgentChannelOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    this.server?.on('upgrade', this.onUpgrade);
    const every = Math.max(50, Math.min(this.options.heartbeatTimeoutMs / 4, 5_000));
    this.watchdog = setInterval(() => void this.work.run(() => this.markSilentMachines()), every);
    this.watchdog.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.server?.off('upgrade', this.onUpgrade);
    if (this.watchdog) clearInterval(this.watchdog);
    for (const timer of this.offlineTimers.values()) clearTimeout(timer);
    this.sessions.closeAll();
    this.wss.close();
    // Agents' messages still queued and a watchdog pass end before the app (and then its database) closes.
    await this.work.stop();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (new URL(request.url ?? '/', 'http://agent').pathname !== AGENT_CHANNEL_PATH) return;
    const refuse = (status: string) => {
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    const bearer = upgradeBearer(request);
    if (!bearer) return refuse('401 Unauthorized');
    let key: AuthenticatedKey | null;
    try {
      key = await this.keys.find(bearer);
    } catch {
      return refuse('503 Service Unavailable');
    }
    if (!key) return refuse('401 Unauthorized');
    if (!scopeAllows(key.scope, 'machine_write')) return refuse('403 Forbidden');
    const principal = key;
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, principal));
  }

  private accept(ws: WebSocket, key: AuthenticatedKey): void {
    let session: AgentSession | undefined;
    let queue = Promise.resolve();
    const send = (message: LifecycleToAgent) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        // A copy's data: relayed at once (not queued behind database work), in the order received.
        const frame = Buffer.isBuffer(data)
          ? data
          : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
        const decoded = decodeCopyData(frame);
        if (session && decoded) this.copies.data(session, decoded.jobId, frame);
        const backup = decoded ? null : decodeBackupData(frame);
        if (session && backup) this.backups.data(session.machineId, backup.backupId, backup.data);
        return;
      }
      const message = parseAgentMessage(data.toString());
      if (!message)
        return this.logger.warn(`machine ${session?.machineId ?? '?'}: malformed agent message dropped`);
      // One agent's messages are handled in the order sent (reports of one instance stay ordered).
      queue = queue.then(() =>
        this.work
          .run(async () => {
            if (!session) session = await this.hello(message, key, ws, send);
            else await this.handle(session, message);
          })
          .catch((error: unknown) => this.logger.warn(`agent message failed: ${String(error)}`)),
      );
    });
    ws.on('close', () => {
      if (!session) return;
      if (!this.closing) this.copies.agentGone(session.machineId);
      if (!this.closing) this.backups.agentGone(session.machineId);
      this.disconnected(session);
    });
    ws.on('error', (error) => this.logger.warn(`agent socket error: ${error.message}`));
  }

  private async hello(
    message: AgentToLifecycle,
    key: AuthenticatedKey,
    ws: WebSocket,
    send: (m: LifecycleToAgent) => void,
  ): Promise<AgentSession | undefined> {
    const refuse = (reason: string) => {
      send({ type: 'refused', reason });
      ws.close(4403, reason.slice(0, 100));
      return undefined;
    };
    if (message.type !== 'hello') return refuse('the first message must be hello');
    if (message.version !== AGENT_CHANNEL_VERSION)
      return refuse(`channel version ${message.version} is not supported (want ${AGENT_CHANNEL_VERSION})`);
    const owner = await this.machineOwner(message.machineId);
    if (owner === null)
      return refuse(
        `machine ${message.machineId} is unknown here; register it first (POST /api/v0/machines)`,
      );
    if (owner !== key.userId) return refuse(`machine ${message.machineId} is not owned by this key`);
    await this.enroll(message.machineId, key.userId, message.driver);
    const session: AgentSession = {
      machineId: message.machineId,
      userId: key.userId,
      send,
      sendBinary: (frame) => {
        if (ws.readyState === ws.OPEN) ws.send(frame, { binary: true });
      },
      close: (code, reason) => ws.close(code, reason),
      lastHeartbeatAt: Date.now(),
      silent: false,
    };
    await rememberAgentMachine(this.runtime.db, message.machineId);
    this.sessions.attach(session);
    const pending = this.offlineTimers.get(message.machineId);
    if (pending) clearTimeout(pending);
    this.offlineTimers.delete(message.machineId);
    const live = await this.runtime.db.query<{
      instance_id: number;
      intended_status: InstanceIntendedStatus;
      ssh_keys: InstanceDetails['sshKeys'] | string | null;
    }>(
      `SELECT instance_id, intended_status, details->'sshKeys' AS ssh_keys
         FROM ${SCHEMA}.instances WHERE machine_id = $1 AND NOT destroyed`,
      [message.machineId],
    );
    send({
      type: 'welcome',
      version: AGENT_CHANNEL_VERSION,
      machineId: message.machineId,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      liveInstanceIds: live.map((row) => Number(row.instance_id)),
      // Re-sent at every (re)connect: the agent reconciles its containers with it (ADR 0012).
      desired: live.map((row) => ({
        instanceId: Number(row.instance_id),
        state: row.intended_status,
        authorizedKeys: authorizedKeys({
          sshKeys:
            typeof row.ssh_keys === 'string'
              ? (JSON.parse(row.ssh_keys) as InstanceDetails['sshKeys'])
              : (row.ssh_keys ?? []),
        }),
      })),
    });
    this.logger.log(`machine ${message.machineId}: host agent connected (${message.driver} driver)`);
    return session;
  }

  /** `HostAgentEnrolled` once per machine: other contexts learn that its instances are served by an agent. */
  private async enroll(machineId: number, ownerId: number, driver: string): Promise<void> {
    await this.runtime.runner.run(
      hostAgentStreamId(machineId),
      hostAgentDecider,
      { type: 'EnrollHostAgent', machineId, ownerId, driver },
      { correlationId: `agent-hello-${machineId}`, causationId: `agent-hello-${machineId}` },
    );
  }

  /** The machine may be registered a moment before the agent connects: wait for the read model. */
  private async machineOwner(machineId: number): Promise<number | null> {
    const deadline = Date.now() + this.options.helloWaitMs;
    for (;;) {
      const machine = await findMachine(this.runtime.db, machineId);
      if (machine) return machine.ownerId;
      if (Date.now() > deadline || this.closing) return null;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async handle(session: AgentSession, message: AgentToLifecycle): Promise<void> {
    switch (message.type) {
      case 'hello':
        return;
      case 'heartbeat':
        session.lastHeartbeatAt = Date.now();
        session.silent = false;
        return;
      case 'benchmark':
        return this.recordBenchmarks(session.machineId, message.results);
      case 'gpu_metrics':
        // a sample is about the session's own machine, whatever machineId it names
        await this.gpuMetrics.record(session.machineId, message.gpus);
        return;
      case 'logs':
        this.sessions.logsArrived(message.requestId, message.lines, message.error);
        return;
      case 'exec':
        this.sessions.execArrived(message.requestId, message.output, message.error);
        return;
      case 'copy_ready':
      case 'copy_source':
      case 'copy_sent':
      case 'copy_ack':
      case 'copy_done':
      case 'copy_failed':
        this.copies.fromAgent(session, message);
        return;
      case 'backup_sent':
        return this.backups.sent(session.machineId, message.backupId, message.bytes);
      case 'backup_failed':
        return this.backups.failed(session.machineId, message.backupId, message.reason);
      case 'report':
      case 'snapshot_report': {
        // An agent reports only about instances on its own machine.
        const rows = await this.runtime.db.query<{ machine_id: number }>(
          `SELECT machine_id FROM ${SCHEMA}.instances WHERE instance_id = $1`,
          [message.instanceId],
        );
        if (!rows[0] || Number(rows[0].machine_id) !== session.machineId) {
          this.logger.warn(
            `machine ${session.machineId}: report about instance ${message.instanceId} of another machine dropped`,
          );
          return;
        }
        if (message.type === 'report') await this.reporter.report(message.instanceId, message.report);
        else
          await this.reporter.reportSnapshot(message.instanceId, message.snapshotId, {
            digest: message.digest,
            reason: message.digest === null ? (message.error ?? 'the host gave no reason') : null,
          });
        return;
      }
    }
  }

  /** The agent's measurements of its machine, recorded with the machine's GPUs and price as they are now. */
  private async recordBenchmarks(
    machineId: number,
    results: ReadonlyArray<{ type: string; value: number }>,
  ): Promise<void> {
    const machine = await findMachine(this.runtime.db, machineId);
    if (!machine || results.length === 0) return;
    const id = `agent-benchmark-${machineId}-${Date.now()}`;
    await this.runtime.runner.run(
      benchmarkStreamId(machineId),
      benchmarkDecider,
      {
        type: 'RecordBenchmarks',
        machineId,
        gpuName: machine.gpuName,
        numGpus: machine.numGpus,
        dphBase: machine.listed ? (machine.ask?.priceGpu ?? null) : null,
        results,
      },
      { correlationId: id, causationId: id },
    );
  }

  private disconnected(session: AgentSession): void {
    if (!this.sessions.detach(session) || this.closing) return;
    this.logger.warn(`machine ${session.machineId}: host agent disconnected`);
    const timer = setTimeout(() => {
      this.offlineTimers.delete(session.machineId);
      if (this.sessions.current(session.machineId)) return;
      void this.work.run(() =>
        this.markInstances(
          session.machineId,
          'offline',
          'Host offline: its agent disconnected and did not come back',
        ),
      );
    }, this.options.offlineGraceMs);
    timer.unref();
    this.offlineTimers.set(session.machineId, timer);
  }

  private async markSilentMachines(): Promise<void> {
    const now = Date.now();
    for (const session of this.sessions.all()) {
      if (session.silent || now - session.lastHeartbeatAt <= this.options.heartbeatTimeoutMs) continue;
      session.silent = true;
      const seconds = Math.round(this.options.heartbeatTimeoutMs / 1000);
      await this.markInstances(
        session.machineId,
        'unknown',
        `Host unknown: no heartbeat from its agent for ${seconds} s`,
      ).catch((error: unknown) =>
        this.logger.warn(`marking machine ${session.machineId} unknown failed: ${String(error)}`),
      );
    }
  }

  /** Every live instance on the machine moves to unknown or offline (never back to running: spec). */
  private async markInstances(
    machineId: number,
    actualStatus: Extract<InstanceActualStatus, 'unknown' | 'offline'>,
    statusMsg: string,
  ): Promise<void> {
    if (this.closing) return;
    const rows = await this.runtime.db.query<{ instance_id: number }>(
      `SELECT instance_id FROM ${SCHEMA}.instances WHERE machine_id = $1 AND NOT destroyed AND ${NOT_DEAD}`,
      [machineId],
    );
    for (const row of rows) {
      await this.reporter.report(Number(row.instance_id), {
        actualStatus,
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg,
      });
    }
  }
}
