import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ApiError, authorizedKeysSummary } from '@rigmarket/contracts';
import { SIMULATED_HOST_TIMINGS } from '../instance-lifecycle.tokens';
import { containerPorts } from '../instances/create-instance/runtype';
import type { HostReport } from '../instances/instance.decider';
import type { HostDriver, ProvisionSpec } from './host-driver';
import { HostReporter } from './host-reporter';

export interface SimulatedHostTimings {
  /** null -> loading (image pull starts) */
  pullMs: number;
  /** loading -> running (boot completes) */
  bootMs: number;
  /** running -> stopped, stopped -> running */
  stopMs: number;
}

export const REALISTIC_TIMINGS: SimulatedHostTimings = { pullMs: 1_000, bootMs: 4_000, stopMs: 1_000 };

/** Sink of reports; HostReporter in the app, a recorder in unit tests. */
export interface ReportSink {
  report(instanceId: number, report: HostReport): Promise<void>;
}

/**
 * A host without containers: timers move the instance null -> loading -> running and back to stopped,
 * with a synthetic SSH endpoint. For the embedded demo, load tests and the e2e suite.
 */
@Injectable()
export class SimulatedHostDriver implements HostDriver, OnApplicationShutdown {
  private readonly timers = new Map<number, Set<NodeJS.Timeout>>();
  private readonly specs = new Map<number, ProvisionSpec>();
  /** Synthetic output per instance: what the container printed and what the daemon did. */
  private readonly output = new Map<number, { container: string[]; daemon: string[] }>();
  /** Reports of one instance go out in order, one at a time. */
  private readonly queues = new Map<number, Promise<void>>();
  private closed = false;

  constructor(
    @Inject(HostReporter) private readonly sink: ReportSink,
    @Inject(SIMULATED_HOST_TIMINGS) private readonly timings: SimulatedHostTimings,
  ) {}

  provision(spec: ProvisionSpec): void {
    this.cancel(spec.instanceId);
    this.specs.set(spec.instanceId, spec);
    if (spec.config.volume)
      this.daemon(
        spec.instanceId,
        `mount volume ${spec.config.volume.volumeId} at ${spec.config.volume.mountPath}`,
      );
    this.daemon(spec.instanceId, `pull ${spec.config.image}`);
    if (spec.authorizedKeys.length > 0)
      this.daemon(spec.instanceId, authorizedKeysSummary(spec.authorizedKeys));
    this.after(spec.instanceId, this.timings.pullMs, {
      actualStatus: 'loading',
      statusMsg: `Pulling image ${spec.config.image}`,
    });
    this.after(
      spec.instanceId,
      this.timings.pullMs + this.timings.bootMs,
      spec.targetState === 'running' ? this.runningReport(spec) : stoppedReport(),
    );
  }

  /**
   * After a restart (HostCommandDispatcher): the host's pending transitions are derived from the stored
   * state, not from timers that died with the process. A provisioning instance is provisioned again, a
   * loading one finishes booting, and one whose host state differs from its intent is started or stopped.
   */
  resume(spec: ProvisionSpec, actual: 'loading' | 'running' | 'stopped' | null): void {
    const id = spec.instanceId;
    this.cancel(id);
    this.specs.set(id, spec);
    this.daemon(id, `resumed after a restart (${actual ?? 'provisioning'}, meant to be ${spec.targetState})`);
    if (actual === null) return this.provision(spec);
    if (spec.targetState === 'running') {
      if (actual === 'loading') this.after(id, this.timings.bootMs, this.runningReport(spec));
      else if (actual === 'stopped') this.start(id);
    } else if (actual !== 'stopped') this.stop(id);
  }

  stop(instanceId: number, statusMsg?: string): void {
    this.daemon(instanceId, 'stop container');
    this.cancel(instanceId);
    this.after(instanceId, this.timings.stopMs, { ...stoppedReport(), ...(statusMsg ? { statusMsg } : {}) });
  }

  start(instanceId: number): void {
    const spec = this.specs.get(instanceId);
    if (!spec) return;
    this.daemon(instanceId, 'start container');
    this.cancel(instanceId);
    this.after(instanceId, this.timings.stopMs, this.runningReport(spec));
  }

  reboot(instanceId: number): void {
    this.restart(instanceId, 'Rebooting');
  }

  recycle(instanceId: number): void {
    const spec = this.specs.get(instanceId);
    this.restart(instanceId, `Recycling: pulling image ${spec?.config.image ?? ''}`.trim());
  }

  /** `vastai update instance`: the container is recreated from the new spec (started when meant to run). */
  update(spec: ProvisionSpec): void {
    const before = this.specs.get(spec.instanceId);
    if (!before) return this.provision(spec);
    this.specs.set(spec.instanceId, { ...spec, instanceApiKey: before.instanceApiKey });
    if (spec.targetState === 'running')
      this.restart(spec.instanceId, `Updating: pulling image ${spec.config.image}`);
    else this.daemon(spec.instanceId, `recreated from ${spec.config.image} (stopped)`);
  }

  /** Records the instance's authorized keys (a real host writes them into the container). */
  setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): void {
    const spec = this.specs.get(instanceId);
    if (spec) this.specs.set(instanceId, { ...spec, authorizedKeys });
    this.daemon(instanceId, authorizedKeysSummary(authorizedKeys));
  }

  /** What the host was told to run for this instance (undefined before provisioning and after destroy). */
  provisioned(instanceId: number): ProvisionSpec | undefined {
    return this.specs.get(instanceId);
  }

  /** The simulated host is always there. */
  unavailableReason(): Promise<string | null> {
    return Promise.resolve(null);
  }

  fail(
    instanceId: number,
    actualStatus: 'exited' | 'unknown' | 'offline',
    statusMsg: string | null = null,
  ): void {
    this.cancel(instanceId);
    this.after(instanceId, 0, { actualStatus, sshHost: null, sshPort: null, ports: {}, statusMsg });
  }

  destroy(instanceId: number): void {
    this.cancel(instanceId);
    this.specs.delete(instanceId);
    this.output.delete(instanceId);
  }

  async logs(instanceId: number, daemon: boolean): Promise<string[]> {
    const out = this.output.get(instanceId);
    return [...((daemon ? out?.daemon : out?.container) ?? [])];
  }

  async execute(instanceId: number): Promise<string> {
    throw new ApiError(
      409,
      'no_container',
      `Instance ${instanceId} runs on a simulated host, which has no container to run commands in`,
    );
  }

  private daemon(instanceId: number, line: string): void {
    this.lines(instanceId).daemon.push(`[rigmarket-daemon] instance ${instanceId}: ${line}`);
  }

  private lines(instanceId: number) {
    const out = this.output.get(instanceId) ?? { container: [], daemon: [] };
    this.output.set(instanceId, out);
    return out;
  }

  onApplicationShutdown(): void {
    this.closed = true;
    for (const id of [...this.timers.keys()]) this.cancel(id);
  }

  private restart(instanceId: number, statusMsg: string): void {
    const spec = this.specs.get(instanceId);
    if (!spec) return;
    this.daemon(instanceId, statusMsg.toLowerCase());
    this.cancel(instanceId);
    this.after(instanceId, 0, {
      actualStatus: 'loading',
      sshHost: null,
      sshPort: null,
      ports: {},
      statusMsg,
    });
    this.after(instanceId, this.timings.bootMs, this.runningReport(spec));
  }

  private runningReport(spec: ProvisionSpec): HostReport {
    const sshPort = 20_000 + (spec.instanceId % 20_000) * 2;
    const ports: Record<string, number> = {};
    containerPorts(spec.config.runtype, spec.config.env).forEach((port, i) => {
      ports[`${port}/tcp`] = port === 22 ? sshPort : 40_000 + ((spec.instanceId * 16 + i) % 20_000);
    });
    return {
      actualStatus: 'running',
      sshHost: spec.publicIpaddr ?? `ssh${spec.machineId}.rigmarket.test`,
      sshPort,
      ports,
      statusMsg: 'Instance running (simulated host)',
    };
  }

  private after(instanceId: number, ms: number, report: HostReport): void {
    if (this.closed) return;
    const set = this.timers.get(instanceId) ?? new Set<NodeJS.Timeout>();
    this.timers.set(instanceId, set);
    const timer = setTimeout(() => {
      set.delete(timer);
      if (this.closed) return;
      this.record(instanceId, report);
      const next = (this.queues.get(instanceId) ?? Promise.resolve()).then(() =>
        this.sink.report(instanceId, report),
      );
      this.queues.set(
        instanceId,
        next.catch(() => undefined),
      );
    }, ms);
    timer.unref();
    set.add(timer);
  }

  /** What the container would print at this point (the service entrypoint, then onstart). */
  private record(instanceId: number, report: HostReport): void {
    const spec = this.specs.get(instanceId);
    const out = this.lines(instanceId);
    this.daemon(instanceId, `status ${report.actualStatus}`);
    if (report.actualStatus !== 'running' || !spec) return;
    const { config } = spec;
    if (config.runtype === 'args') {
      out.container.push(
        `exec ${config.image} ${(config.args ?? (config.argsStr ? [config.argsStr] : [])).join(' ')}`.trim(),
      );
    } else {
      out.container.push('Starting OpenBSD Secure Shell server: sshd.');
      if (config.runtype.startsWith('jupyter'))
        out.container.push(
          `Jupyter ${config.useJupyterLab ? 'Lab' : 'Notebook'} is running at http://0.0.0.0:8080/`,
        );
      if (config.onstart) out.container.push(`onstart: ${config.onstart}`);
    }
    out.container.push('container ready');
  }

  private cancel(instanceId: number): void {
    for (const timer of this.timers.get(instanceId) ?? []) clearTimeout(timer);
    this.timers.delete(instanceId);
  }
}

function stoppedReport(): HostReport {
  return {
    actualStatus: 'stopped',
    sshHost: null,
    sshPort: null,
    ports: {},
    statusMsg: 'Stopped: compute billing halted, disk storage still billed',
  };
}
