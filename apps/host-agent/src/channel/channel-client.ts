import {
  AGENT_CHANNEL_VERSION,
  type AgentBenchmarkResult,
  type AgentGpuSample,
  type AgentHostReport,
  type AgentSnapshotRequest,
  type AgentToLifecycle,
  type LifecycleToAgent,
  decodeCopyData,
} from '@rigmarket/contracts';
import WebSocket from 'ws';
import type { AgentDriver } from '../drivers/agent-driver';
import { AgentBackups } from './agent-backups';
import { AgentCopies } from './agent-copies';
import { CloudCopies } from './cloud-copies';

export interface ChannelClientOptions {
  channelUrl: string;
  apiKey: string;
  machineId: number;
  driver: AgentDriver;
  log: (line: string) => void;
  /** Heartbeat interval until the welcome says otherwise. */
  heartbeatIntervalMs?: number;
}

/**
 * The agent's end of the agent channel: connects (and reconnects, backing off), says hello for its machine,
 * runs the commands it receives on the driver, heartbeats, and sends the driver's reports. Reports made
 * while disconnected wait and go out, in order, after the next welcome.
 */
export class ChannelClient {
  private socket: WebSocket | undefined;
  private welcomed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs = 500;
  private closed = false;
  private readonly outbox: AgentToLifecycle[] = [];
  /** The last host command id run per instance: a redelivered command (at least once) is skipped. */
  private readonly lastCommand = new Map<number, number>();
  /** Commands of one instance run one after the other. */
  private readonly queues = new Map<number, Promise<void>>();
  private onWelcome: (() => void) | undefined;
  private readonly copies: AgentCopies;
  private readonly cloudCopies: CloudCopies;
  private readonly backups: AgentBackups;

  constructor(private readonly options: ChannelClientOptions) {
    const channel = {
      send: (message: AgentToLifecycle) => this.send(message),
      sendBinary: (frame: Buffer) => this.sendBinary(frame),
      log: options.log,
    };
    this.copies = new AgentCopies(options.driver, channel);
    this.cloudCopies = new CloudCopies(options.driver, channel);
    this.backups = new AgentBackups(options.driver, channel);
  }

  /** Connects; resolves at the first welcome. */
  open(): Promise<void> {
    const welcomed = new Promise<void>((resolve) => (this.onWelcome = resolve));
    this.connect();
    return welcomed;
  }

  get connected(): boolean {
    return this.welcomed;
  }

  report(instanceId: number, report: AgentHostReport): void {
    this.send({ type: 'report', instanceId, report });
  }

  /** A GPU sample; dropped while the channel is down (telemetry is not worth queueing). */
  gpuMetrics(gpus: AgentGpuSample[]): void {
    this.send({ type: 'gpu_metrics', machineId: this.options.machineId, gpus });
  }

  /** The machine's benchmark results; kept until the next welcome when the channel is down. */
  benchmark(results: AgentBenchmarkResult[]): void {
    this.send({ type: 'benchmark', machineId: this.options.machineId, results });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.retry) clearTimeout(this.retry);
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close(1000, 'agent stopping');
      setTimeout(() => {
        socket.terminate();
        resolve();
      }, 2_000).unref();
    });
  }

  private connect(): void {
    if (this.closed) return;
    const socket = new WebSocket(this.options.channelUrl, {
      headers: { Authorization: `Bearer ${this.options.apiKey}` },
      handshakeTimeout: 15_000,
    });
    this.socket = socket;
    socket.on('open', () => {
      socket.send(
        JSON.stringify({
          type: 'hello',
          version: AGENT_CHANNEL_VERSION,
          machineId: this.options.machineId,
          driver: this.options.driver.name,
        } satisfies AgentToLifecycle),
      );
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        const frame = decodeCopyData(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer));
        if (frame) this.copies.data(frame.jobId, frame.data);
        return;
      }
      let message: LifecycleToAgent;
      try {
        message = JSON.parse(data.toString()) as LifecycleToAgent;
      } catch {
        return;
      }
      this.receive(message);
    });
    socket.on('unexpected-response', (_request, response) => {
      this.options.log(`agent channel refused the connection: HTTP ${response.statusCode}`);
    });
    socket.on('error', (error) => this.options.log(`agent channel error: ${error.message}`));
    socket.on('close', () => {
      this.welcomed = false;
      this.copies.abortAll('the agent channel closed');
      this.cloudCopies.abortAll('the agent channel closed');
      this.backups.abortAll('the agent channel closed');
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.closed) return;
      this.options.log(`agent channel closed; reconnecting in ${this.backoffMs} ms`);
      this.retry = setTimeout(() => this.connect(), this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, 15_000);
    });
  }

  private receive(message: LifecycleToAgent): void {
    const driver = this.options.driver;
    if (this.alreadyRan(message)) return;
    switch (message.type) {
      case 'welcome':
        this.welcomed = true;
        this.backoffMs = 500;
        this.options.log(`agent channel open for machine ${message.machineId}`);
        this.startHeartbeat(message.heartbeatIntervalMs);
        void driver
          .forgetAllBut(message.liveInstanceIds ?? [])
          .catch((error: unknown) =>
            this.options.log(`cleanup of destroyed instances failed: ${String(error)}`),
          );
        // The platform's desired state of each live instance: containers are started or stopped to match.
        for (const { instanceId, state, authorizedKeys } of message.desired ?? [])
          this.run(instanceId, 'reconcile', async () => {
            // An empty list changes nothing here: a detach made while the agent was away comes as ssh_keys.
            if (authorizedKeys?.length) await driver.setAuthorizedKeys(instanceId, authorizedKeys);
            await driver.converge(instanceId, state);
          });
        for (const queued of this.outbox.splice(0)) this.send(queued);
        this.onWelcome?.();
        return;
      case 'refused':
        this.options.log(`agent channel refused: ${message.reason}`);
        return;
      case 'provision':
        return this.run(message.spec.instanceId, message.type, () => driver.provision(message.spec));
      case 'update':
        return this.run(message.spec.instanceId, message.type, () => driver.update(message.spec));
      case 'start':
        return this.run(message.instanceId, message.type, () => driver.start(message.instanceId));
      case 'stop':
        return this.run(message.instanceId, message.type, () =>
          driver.stop(message.instanceId, message.statusMsg),
        );
      case 'reboot':
        return this.run(message.instanceId, message.type, () => driver.reboot(message.instanceId));
      case 'recycle':
        return this.run(message.instanceId, message.type, () => driver.recycle(message.instanceId));
      case 'destroy':
        return this.run(message.instanceId, message.type, () => driver.destroy(message.instanceId));
      case 'ssh_keys':
        return this.run(message.instanceId, message.type, () =>
          driver.setAuthorizedKeys(message.instanceId, message.authorizedKeys),
        );
      case 'snapshot':
        this.snapshot(message.snapshot);
        return;
      case 'backup':
        // In the instance's queue: its destroy, sent right after, waits until the tar has been read.
        return this.run(message.instanceId, message.type, () => this.backups.take(message.backup));
      case 'backup_ack':
        this.backups.ack(message.backupId, message.bytes);
        return;
      case 'backup_abort':
        this.backups.abort(message.backupId, message.reason);
        return;
      case 'logs':
        void driver.logs(message.instanceId, message.daemon).then(
          (lines) => this.send({ type: 'logs', requestId: message.requestId, lines }),
          (error: unknown) =>
            this.send({ type: 'logs', requestId: message.requestId, lines: [], error: String(error) }),
        );
        return;
      case 'exec':
        void driver.exec(message.instanceId, message.argv).then(
          (output) => this.send({ type: 'exec', requestId: message.requestId, output }),
          (error: unknown) =>
            this.send({
              type: 'exec',
              requestId: message.requestId,
              output: '',
              error: error instanceof Error ? error.message : String(error),
            }),
        );
        return;
      case 'copy_receive':
      case 'copy_send':
      case 'copy_ack':
      case 'copy_end':
        this.copies.handle(message);
        return;
      case 'copy_abort':
        if (!this.cloudCopies.abort(message.jobId, message.reason)) this.copies.handle(message);
        return;
      case 'cloud_copy':
        this.cloudCopies.handle(message);
        return;
      default:
        return;
    }
  }

  /**
   * A snapshot runs beside the instance's other commands (a push may take minutes; a stop or destroy meanwhile
   * makes it fail), within its time limit, and its outcome is reported like a transition (kept while away).
   */
  private snapshot(request: AgentSnapshotRequest): void {
    const { instanceId, snapshotId } = request;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), request.timeLimitMs);
    void this.options.driver
      .snapshot(request, abort.signal)
      .then(
        (digest) => this.send({ type: 'snapshot_report', instanceId, snapshotId, digest }),
        (error: unknown) => {
          const reason = abort.signal.aborted
            ? `the host gave up after the time limit of ${Math.ceil(request.timeLimitMs / 1000)} s`
            : error instanceof Error
              ? error.message
              : String(error);
          this.options.log(`snapshot ${snapshotId} of instance ${instanceId} failed: ${reason}`);
          this.send({ type: 'snapshot_report', instanceId, snapshotId, digest: null, error: reason });
        },
      )
      .finally(() => clearTimeout(timer));
  }

  /** True for a host command whose id is not above the last one run for its instance (a redelivery). */
  private alreadyRan(message: LifecycleToAgent): boolean {
    if (!('commandId' in message) || message.commandId === undefined) return false;
    const instanceId =
      message.type === 'provision' || message.type === 'update'
        ? message.spec.instanceId
        : message.instanceId;
    const last = this.lastCommand.get(instanceId) ?? 0;
    if (message.commandId <= last) {
      this.options.log(`${message.type} of instance ${instanceId}: command ${message.commandId} already ran`);
      return true;
    }
    this.lastCommand.set(instanceId, message.commandId);
    return false;
  }

  private run(instanceId: number, what: string, work: () => Promise<void>): void {
    const next = (this.queues.get(instanceId) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) =>
        this.options.log(`${what} of instance ${instanceId} failed: ${String(error)}`),
      );
    this.queues.set(instanceId, next);
    void next.then(() => {
      if (this.queues.get(instanceId) === next) this.queues.delete(instanceId);
    });
  }

  private startHeartbeat(intervalMs: number): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    const beat = () => this.send({ type: 'heartbeat', machineId: this.options.machineId });
    beat();
    this.heartbeat = setInterval(beat, Math.max(50, intervalMs));
  }

  private sendBinary(frame: Buffer): Promise<void> {
    const socket = this.socket;
    if (!this.welcomed || socket?.readyState !== WebSocket.OPEN)
      return Promise.reject(new Error('the agent channel is not open'));
    return new Promise<void>((resolve, reject) =>
      socket.send(frame, { binary: true }, (error) => (error ? reject(error) : resolve())),
    );
  }

  private send(message: AgentToLifecycle): void {
    const socket = this.socket;
    if (this.welcomed && socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    else if (message.type === 'report' || message.type === 'snapshot_report' || message.type === 'benchmark')
      this.outbox.push(message);
  }
}
