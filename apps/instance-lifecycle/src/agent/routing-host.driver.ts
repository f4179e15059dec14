import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type AgentBackupRequest,
  type AgentSnapshotRequest,
  ApiError,
  EXEC_TIMEOUT_MS,
  type LifecycleToAgent,
} from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import type { HostCommandKind } from '../host/host-commands';
import type { HostDriver, ProvisionSpec } from '../host/host-driver';
import { BackupReceiver } from '../backups/backup-receiver';
import { HostReporter } from '../host/host-reporter';
import { SimulatedHostDriver } from '../host/simulated-host.driver';
import { SCHEMA } from '../schema';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AGENT_CHANNEL_OPTIONS, type AgentChannelOptions } from './agent-channel.options';
import { isAgentMachine } from './agent-machines';
import { AgentSessions } from './agent-sessions';

const AGENT_GONE_MSG = 'Host offline: its agent is not connected';
export const SIMULATED_BACKUP_MSG =
  'this machine runs on the simulated host, which keeps no container files to back up; backups need a host agent with the Docker driver';
export const AGENT_AWAY_BACKUP_MSG = 'the host agent was not connected when the instance was removed';
export const SIMULATED_SNAPSHOT_MSG =
  'this machine runs on the simulated host, which runs no container to commit; snapshots need a host agent with the Docker driver';

/**
 * The HOST_DRIVER instance-lifecycle uses: a machine served by a connected host agent gets its commands
 * over the agent channel; a machine no agent ever served stays on the in-process simulated host (the
 * embedded demo and the tests rely on it). Commands of one instance go out in the order given.
 */
@Injectable()
export class RoutingHostDriver implements HostDriver {
  private readonly logger = new Logger('RoutingHostDriver');
  private readonly machineOf = new Map<number, number>();
  private readonly queues = new Map<number, Promise<void>>();

  constructor(
    private readonly simulated: SimulatedHostDriver,
    private readonly sessions: AgentSessions,
    private readonly reporter: HostReporter,
    private readonly backups: BackupReceiver,
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(AGENT_CHANNEL_OPTIONS) private readonly options: AgentChannelOptions,
  ) {}

  provision(spec: ProvisionSpec): void {
    this.machineOf.set(spec.instanceId, spec.machineId);
    this.enqueue(spec.instanceId, async () => {
      if (!(await this.agentServed(spec.machineId))) return this.simulated.provision(spec);
      const numGpus = (await this.instanceRow(spec.instanceId))?.numGpus ?? 1;
      this.toAgent(spec.machineId, spec.instanceId, { type: 'provision', spec: { ...spec, numGpus } });
    });
  }

  stop(instanceId: number, statusMsg?: string): void {
    this.route(instanceId, () => this.simulated.stop(instanceId, statusMsg), {
      type: 'stop',
      instanceId,
      ...(statusMsg ? { statusMsg } : {}),
    });
  }

  start(instanceId: number): void {
    this.route(instanceId, () => this.simulated.start(instanceId), { type: 'start', instanceId });
  }

  reboot(instanceId: number): void {
    this.route(instanceId, () => this.simulated.reboot(instanceId), { type: 'reboot', instanceId });
  }

  recycle(instanceId: number): void {
    this.route(instanceId, () => this.simulated.recycle(instanceId), { type: 'recycle', instanceId });
  }

  update(spec: ProvisionSpec): void {
    this.machineOf.set(spec.instanceId, spec.machineId);
    this.enqueue(spec.instanceId, async () => {
      if (!(await this.agentServed(spec.machineId))) return this.simulated.update(spec);
      const numGpus = (await this.instanceRow(spec.instanceId))?.numGpus ?? 1;
      this.toAgent(spec.machineId, spec.instanceId, { type: 'update', spec: { ...spec, numGpus } });
    });
  }

  destroy(instanceId: number): void {
    this.route(instanceId, () => this.simulated.destroy(instanceId), { type: 'destroy', instanceId }, false);
  }

  setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): void {
    this.route(instanceId, () => this.simulated.setAuthorizedKeys(instanceId, authorizedKeys), {
      type: 'ssh_keys',
      instanceId,
      authorizedKeys,
    });
  }

  /**
   * One command of host_commands (HostCommandDispatcher), with its id: an agent remembers the last id it
   * ran per instance and ignores a redelivery. 'later' when the machine's agent is away (the command waits
   * for it; after the offline grace it is delivered anyway, which reports the instance offline).
   */
  async deliver(
    command: { commandId: number; instanceId: number; machineId: number; kind: HostCommandKind },
    detail: {
      spec?: ProvisionSpec;
      statusMsg?: string;
      authorizedKeys?: string[];
      snapshot?: AgentSnapshotRequest;
      backup?: AgentBackupRequest;
    },
    waitedMs: number,
    /** Whether an agent serves the machine, when the caller read it with its own facts (agent_machines). */
    agentMachine?: boolean,
  ): Promise<'sent' | 'later'> {
    const { commandId, instanceId, machineId, kind } = command;
    this.machineOf.set(instanceId, machineId);
    if (!(await this.agentServed(machineId, agentMachine))) {
      this.enqueue(instanceId, () => {
        if (kind === 'provision' || kind === 'update') {
          if (detail.spec) this.simulated[kind](detail.spec);
        } else if (kind === 'stop') this.simulated.stop(instanceId, detail.statusMsg);
        else if (kind === 'ssh_keys')
          this.simulated.setAuthorizedKeys(instanceId, detail.authorizedKeys ?? []);
        else if (kind === 'snapshot') {
          // The simulated host runs no container: there is nothing to commit or push.
          if (detail.snapshot)
            void this.reporter.reportSnapshot(instanceId, detail.snapshot.snapshotId, {
              digest: null,
              reason: SIMULATED_SNAPSHOT_MSG,
            });
        } else if (kind === 'backup') {
          if (detail.backup) void this.backups.fail(detail.backup.backupId, SIMULATED_BACKUP_MSG);
        } else this.simulated[kind](instanceId);
      });
      return 'sent';
    }
    if (!this.sessions.current(machineId) && waitedMs < this.options.offlineGraceMs) return 'later';
    if (kind === 'backup') {
      const backup = detail.backup;
      if (!backup) return 'sent';
      // Its container's files come up the channel to the receiver, before the destroy that follows runs.
      this.enqueue(instanceId, async () => {
        if (!this.sessions.current(machineId))
          return this.backups.fail(backup.backupId, AGENT_AWAY_BACKUP_MSG);
        this.backups.expect(machineId, backup);
        this.toAgent(machineId, instanceId, { type: 'backup', commandId, instanceId, backup }, false);
      });
      return 'sent';
    }
    let message: LifecycleToAgent;
    if (kind === 'provision' || kind === 'update') {
      if (!detail.spec) return 'sent';
      const numGpus = (await this.instanceRow(instanceId))?.numGpus ?? 1;
      message = { type: kind, commandId, spec: { ...detail.spec, numGpus } };
    } else if (kind === 'stop')
      message = {
        type: 'stop',
        commandId,
        instanceId,
        ...(detail.statusMsg ? { statusMsg: detail.statusMsg } : {}),
      };
    else if (kind === 'ssh_keys')
      message = { type: 'ssh_keys', commandId, instanceId, authorizedKeys: detail.authorizedKeys ?? [] };
    else if (kind === 'snapshot') {
      if (!detail.snapshot) return 'sent';
      message = { type: 'snapshot', commandId, instanceId, snapshot: detail.snapshot };
    } else message = { type: kind, commandId, instanceId };
    this.enqueue(instanceId, () => this.toAgent(machineId, instanceId, message, kind !== 'destroy'));
    return 'sent';
  }

  async unavailableReason(machineId: number): Promise<string | null> {
    if (!(await this.agentServed(machineId)) || this.sessions.current(machineId)) return null;
    return `the host agent of machine ${machineId} is not connected`;
  }

  async logs(instanceId: number, daemon: boolean): Promise<string[]> {
    const machineId = await this.machine(instanceId);
    if (machineId === null || !(await this.agentServed(machineId)))
      return this.simulated.logs(instanceId, daemon);
    if (!this.sessions.current(machineId))
      throw new ApiError(
        503,
        'host_unreachable',
        `The host agent of machine ${machineId} is not connected; retry later`,
      );
    return this.sessions.requestLogs(machineId, instanceId, daemon, this.options.logsTimeoutMs);
  }

  async execute(instanceId: number, argv: string[]): Promise<string> {
    const machineId = await this.machine(instanceId);
    if (machineId === null || !(await this.agentServed(machineId))) return this.simulated.execute(instanceId);
    // The agent stops waiting for the command after EXEC_TIMEOUT_MS; its answer needs a moment more.
    return this.sessions.requestExec(machineId, instanceId, argv, EXEC_TIMEOUT_MS + 5_000);
  }

  private route(
    instanceId: number,
    simulated: () => void,
    command: LifecycleToAgent,
    reportIfGone = true,
  ): void {
    this.enqueue(instanceId, async () => {
      const machineId = await this.machine(instanceId);
      if (machineId === null || !(await this.agentServed(machineId))) return simulated();
      this.toAgent(machineId, instanceId, command, reportIfGone);
    });
  }

  private toAgent(
    machineId: number,
    instanceId: number,
    command: LifecycleToAgent,
    reportIfGone = true,
  ): void {
    if (this.sessions.send(machineId, command)) return;
    this.logger.warn(
      `machine ${machineId}: no agent connected; ${command.type} of instance ${instanceId} not delivered`,
    );
    if (reportIfGone)
      void this.reporter.report(instanceId, {
        actualStatus: 'offline',
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: AGENT_GONE_MSG,
      });
  }

  private enqueue(instanceId: number, work: () => Promise<void> | void): void {
    const next = (this.queues.get(instanceId) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => this.logger.warn(`instance ${instanceId}: ${String(error)}`));
    this.queues.set(instanceId, next);
    void next.then(() => {
      if (this.queues.get(instanceId) === next) this.queues.delete(instanceId);
    });
  }

  private async agentServed(machineId: number, agentMachine?: boolean): Promise<boolean> {
    if (this.sessions.servedHere(machineId)) return true;
    if (!(agentMachine ?? (await isAgentMachine(this.runtime.db, machineId)))) return false;
    this.sessions.markServed(machineId);
    return true;
  }

  private async machine(instanceId: number): Promise<number | null> {
    const known = this.machineOf.get(instanceId);
    if (known !== undefined) return known;
    const row = await this.instanceRow(instanceId);
    if (row) this.machineOf.set(instanceId, row.machineId);
    return row?.machineId ?? null;
  }

  private async instanceRow(instanceId: number): Promise<{ machineId: number; numGpus: number } | null> {
    const rows = await this.runtime.db.query<{ machine_id: number; num_gpus: number }>(
      `SELECT machine_id, num_gpus FROM ${SCHEMA}.instances WHERE instance_id = $1`,
      [instanceId],
    );
    return rows[0] ? { machineId: Number(rows[0].machine_id), numGpus: Number(rows[0].num_gpus) } : null;
  }
}
