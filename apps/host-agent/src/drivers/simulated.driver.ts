import { Readable, Writable } from 'node:stream';
import { type AgentProvisionSpec, authorizedKeysSummary } from '@rigmarket/contracts';
import { type AgentDriver, type DaemonLog, type ReportTransition, STOPPED_MSG } from './agent-driver';
import { containerPorts } from './container-spec';

/** A tar with no entries: its two zero blocks. */
const EMPTY_TAR = Buffer.alloc(1024);

/**
 * `--driver simulated`: an agent without containers, for trying the channel on a machine without Docker.
 * Timers stand in for the runtime (pull, boot); nothing runs.
 */
export class SimulatedAgentDriver implements AgentDriver {
  readonly name = 'simulated';
  private report: ReportTransition = () => undefined;
  private readonly specs = new Map<number, AgentProvisionSpec>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Each volume's data as a tar (clone volume). */
  private readonly volumes = new Map<number, Buffer>();

  constructor(private readonly options: { sshHost: string; daemonLog: DaemonLog; bootMs?: number }) {}

  async watch(report: ReportTransition): Promise<void> {
    this.report = report;
  }

  async provision(spec: AgentProvisionSpec): Promise<void> {
    this.specs.set(spec.instanceId, spec);
    this.options.daemonLog.line(spec.instanceId, `simulated provision of ${spec.config.image}`);
    this.report(spec.instanceId, {
      actualStatus: 'loading',
      statusMsg: `Pulling image ${spec.config.image} (simulated)`,
    });
    if (spec.targetState === 'running') this.later(() => this.running(spec.instanceId));
    else this.later(() => this.report(spec.instanceId, { actualStatus: 'stopped', statusMsg: STOPPED_MSG }));
  }

  async start(instanceId: number): Promise<void> {
    this.later(() => this.running(instanceId));
  }

  async stop(instanceId: number, statusMsg?: string): Promise<void> {
    this.later(() =>
      this.report(instanceId, {
        actualStatus: 'stopped',
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: statusMsg ?? STOPPED_MSG,
      }),
    );
  }

  async reboot(instanceId: number): Promise<void> {
    this.report(instanceId, { actualStatus: 'loading', statusMsg: 'Rebooting (simulated)' });
    this.later(() => this.running(instanceId));
  }

  async recycle(instanceId: number): Promise<void> {
    await this.reboot(instanceId);
  }

  async update(spec: AgentProvisionSpec): Promise<void> {
    const before = this.specs.get(spec.instanceId);
    await this.provision({ ...spec, instanceApiKey: before?.instanceApiKey ?? spec.instanceApiKey });
  }

  async destroy(instanceId: number): Promise<void> {
    this.specs.delete(instanceId);
  }

  /** Records the keys (nothing runs to write them into). */
  async setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): Promise<void> {
    const spec = this.specs.get(instanceId);
    if (spec) this.specs.set(instanceId, { ...spec, authorizedKeys });
    this.options.daemonLog.line(instanceId, `simulated ${authorizedKeysSummary(authorizedKeys)}`);
  }

  async converge(instanceId: number, desired: 'running' | 'stopped'): Promise<void> {
    if (!this.specs.has(instanceId)) return;
    if (desired === 'running') await this.start(instanceId);
    else await this.stop(instanceId);
  }

  async forgetAllBut(liveInstanceIds: number[]): Promise<void> {
    for (const id of this.specs.keys()) if (!liveInstanceIds.includes(id)) this.specs.delete(id);
  }

  async logs(instanceId: number, daemon: boolean): Promise<string[]> {
    return daemon
      ? this.options.daemonLog.of(instanceId)
      : this.specs.has(instanceId)
        ? ['simulated container: no output']
        : [];
  }

  async exec(instanceId: number): Promise<string> {
    throw new Error(
      `instance ${instanceId} runs on a simulated host: there is no container to run commands in`,
    );
  }

  async snapshot(request: { instanceId: number }, _signal?: AbortSignal): Promise<never> {
    throw new Error(
      `Instance ${request.instanceId} runs on a simulated host agent, which has no container to commit`,
    );
  }

  async readArchive(instanceId: number): Promise<never> {
    throw new Error(
      `Instance ${instanceId} runs on a simulated host agent, which has no container file system to copy from`,
    );
  }

  async backupArchive(instanceId: number): Promise<never> {
    throw new Error(
      `Instance ${instanceId} runs on a simulated host agent, which has no container files to back up`,
    );
  }

  async writeArchive(instanceId: number): Promise<never> {
    throw new Error(
      `Instance ${instanceId} runs on a simulated host agent, which has no container file system to copy into`,
    );
  }

  /** The volume's data as the last clone into it left it (an empty tar when none did): no disk here. */
  async readVolumeArchive(volumeId: number): Promise<{ tar: Readable }> {
    return { tar: Readable.from([this.volumes.get(volumeId) ?? EMPTY_TAR]) };
  }

  /** Keeps what a clone sends in memory, as the volume's data. */
  async writeVolumeArchive(
    volumeId: number,
    signal: AbortSignal,
  ): Promise<{ sink: Writable; done: Promise<void> }> {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        chunks.push(chunk);
        callback();
      },
    });
    const done = new Promise<void>((resolve, reject) => {
      sink.once('finish', () => {
        this.volumes.set(volumeId, Buffer.concat(chunks));
        resolve();
      });
      sink.once('close', () => reject(new Error('the extract into the volume was stopped')));
      signal.addEventListener('abort', () => reject(new Error('the extract into the volume was aborted')), {
        once: true,
      });
    });
    return { sink, done };
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
  }

  private running(instanceId: number): void {
    const spec = this.specs.get(instanceId);
    if (!spec) return;
    const ports = Object.fromEntries(
      containerPorts(spec.config.runtype, spec.config.env).map((p, i) => [
        `${p}/tcp`,
        40_000 + ((instanceId * 8 + i) % 20_000),
      ]),
    );
    this.report(instanceId, {
      actualStatus: 'running',
      sshHost: this.options.sshHost,
      sshPort: ports['22/tcp'] ?? null,
      ports,
      statusMsg: 'Instance running (simulated agent)',
    });
  }

  private later(work: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work();
    }, this.options.bootMs ?? 1_000);
    this.timers.add(timer);
  }
}
