import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AgentSnapshotRequest, InstanceIntendedStatus } from '@rigmarket/contracts';
import { type ContextRuntime, idleBackoff } from '@rigmarket/event-sourcing';
import { BACKUP_OPTIONS, type BackupOptions } from '../backups/backup-options';
import { pendingBackupOf } from '../backups/backups';
import { RoutingHostDriver } from '../agent/routing-host.driver';
import { type InstanceDetails, authorizedKeys } from '../read-models/instances/projection';
import { SCHEMA } from '../schema';
import type { EnvVarBox } from '../env-vars/env-var-box';
import { ENV_VAR_BOX, INSTANCE_RUNTIME, PENDING_KEY_BOX } from '../instance-lifecycle.tokens';
import { type SealedEnvVar, openEnvVars, sealedEnvVarsOf } from '../read-models/env-vars/queries';
import type { PendingKeyBox } from '../instances/pending-keys';
import { SNAPSHOT_TIME_LIMIT_MS } from '../instances/snapshot.decider';
import { type HostCommandRow, registerDispatcherKick, rowOf } from './host-commands';
import type { ProvisionSpec } from './host-driver';
import { HostReporter } from './host-reporter';
import { SimulatedHostDriver } from './simulated-host.driver';

/** The fallback poll's delay (commits in this process kick the dispatcher at once). */
const POLL_MS = 1_000;
const LEASE_SECONDS = 30;
const KEEP_DELIVERED = '1 day';
const UNSEALABLE_MSG =
  'Provisioning failed: the instance key could not be opened (the instance-lifecycle processes must share RIGMARKET_INSTANCE_SEAL_KEY). Destroy the instance and rent again.';

interface InstanceRow {
  machine_id: number;
  owner_id: number;
  actual_status: string | null;
  intended_status: InstanceIntendedStatus;
  destroyed: boolean;
  details: InstanceDetails | string;
}

/**
 * What delivering a provision or an update needs, read in one statement: the instance, its machine's public
 * address, whether an agent serves the machine, and the owner's sealed environment variables.
 */
interface DeliveryFacts {
  instance: InstanceRow;
  publicIpaddr: string | null;
  agentMachine: boolean;
  envVars: SealedEnvVar[];
}

/**
 * Delivers host_commands (docs/adr/0012-host-commands.md): claims undelivered rows in order with a lease,
 * hands each to the host driver, then marks it delivered. At least once: a process that dies after
 * handing a command over and before marking it hands it over again after its restart (the agent ignores
 * a command id it already ran). At start it first resumes the simulated host from the stored state.
 *
 * A commit in this process that wrote commands kicks it at once (kickAfterCommit); it also polls, for
 * leases that expire and commands another process wrote, every second, or, where the runtime's reactors
 * back off while idle (embedded mode: `reactors.idlePollMaxMs`), with a delay that doubles up to that while
 * polls claim nothing (but never past the end of a lease a stopped delivery left, which the claim's own
 * statement reads), so an idle server does not query every second, and an idle poll is one statement.
 */
@Injectable()
export class HostCommandDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HostCommandDispatcher');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  /** Rows claimed so far (delivered or put off): the poll backs off while this stays the same. */
  private claimed = 0;
  /**
   * As the last claim saw it: in how many ms the first lease on an undelivered command ends (undefined: no
   * lease held, or the claim failed). Read with the claim, so an idle poll costs one statement.
   */
  private leaseEndsInMs: number | undefined;
  private again = false;
  private stopped = false;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly routing: RoutingHostDriver,
    private readonly simulated: SimulatedHostDriver,
    private readonly reporter: HostReporter,
    @Inject(PENDING_KEY_BOX) private readonly keys: PendingKeyBox,
    @Inject(ENV_VAR_BOX) private readonly envVars: EnvVarBox,
    @Inject(BACKUP_OPTIONS) private readonly backupOptions: BackupOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.resumeSimulated().catch((error: unknown) =>
      this.logger.error(`resuming the simulated host failed: ${String(error)}`),
    );
    await this.runtime.db
      .execute(
        `DELETE FROM ${SCHEMA}.host_commands WHERE delivered_at < now() - interval '${KEEP_DELIVERED}'`,
      )
      .catch(() => undefined);
    // The only process on its database (embedded): a claim found now was left by a killed life of this
    // process, and would keep its host command from the agent for the rest of the lease.
    if (this.runtime.infra.soleProcess)
      await this.runtime.db
        .execute(
          `UPDATE ${SCHEMA}.host_commands SET claimed_until = NULL WHERE delivered_at IS NULL AND claimed_until > now()`,
        )
        .catch(() => undefined);
    registerDispatcherKick(this.runtime, () => this.kick());
    const delay = idleBackoff(POLL_MS, this.runtime.infra.reactors?.idlePollMaxMs);
    const tick = (): void => {
      if (this.stopped) return;
      const before = this.claimed;
      this.kick();
      void (this.running ?? Promise.resolve())
        .catch(() => undefined)
        .then(() => {
          // The last claim of this poll found nothing to take: what it saw of the leases held then.
          const leaseEndsInMs = this.claimed === before ? this.leaseEndsInMs : undefined;
          delay.after(this.claimed - before);
          if (this.stopped) return;
          // A lease left by a delivery that stopped (a crash) is taken again when it ends, not a long
          // idle delay after.
          const ms =
            leaseEndsInMs === undefined ? delay.ms : Math.min(delay.ms, Math.max(POLL_MS, leaseEndsInMs));
          this.timer = setTimeout(tick, ms);
          this.timer.unref();
        });
    };
    tick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Delivers what is pending now (and again if more was written meanwhile). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          while (!this.stopped && (await this.deliverBatch()) > 0);
        } catch (error) {
          if (!this.stopped) this.logger.error(`delivering host commands failed: ${String(error)}`);
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = null));
  }

  /** Waits until no delivery is running (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async deliverBatch(): Promise<number> {
    this.leaseEndsInMs = undefined;
    // One statement: the claim, and (one row with a null command_id when nothing was claimed) when the
    // first lease another delivery holds ends, as the claim's snapshot saw it (rows it claims not counted).
    const answer = await this.runtime.db.query<
      Partial<Parameters<typeof rowOf>[0]> & { lease_ends_in_ms: number | string | null }
    >(
      `WITH claimed AS (
         UPDATE ${SCHEMA}.host_commands SET claimed_until = now() + interval '${LEASE_SECONDS} seconds'
          WHERE command_id IN (
            SELECT command_id FROM ${SCHEMA}.host_commands
             WHERE delivered_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
             ORDER BY command_id LIMIT 100 FOR UPDATE SKIP LOCKED)
          RETURNING command_id, instance_id, machine_id, kind, status_msg, instance_key_sealed, image_login_sealed, created_at),
       lease AS (
         SELECT (EXTRACT(EPOCH FROM min(claimed_until) - now()) * 1000)::float8 AS lease_ends_in_ms
           FROM ${SCHEMA}.host_commands WHERE delivered_at IS NULL AND claimed_until > now())
       SELECT claimed.*, lease.lease_ends_in_ms FROM lease LEFT JOIN claimed ON true`,
    );
    const claimed = answer.filter(
      (r): r is Parameters<typeof rowOf>[0] & { lease_ends_in_ms: number | string | null } =>
        r.command_id !== null && r.command_id !== undefined,
    );
    const ms = answer[0]?.lease_ends_in_ms;
    this.leaseEndsInMs = ms === null || ms === undefined ? undefined : Number(ms);
    this.claimed += claimed.length;
    const rows = claimed.map(rowOf).sort((a, b) => a.commandId - b.commandId);
    const delivered: number[] = [];
    const deferred = new Set<number>();
    try {
      for (const row of rows) {
        if (this.stopped) break;
        // A later command of an instance never overtakes an earlier one that waits.
        const outcome = deferred.has(row.instanceId) ? 'later' : await this.deliver(row);
        if (outcome === 'later') {
          deferred.add(row.instanceId);
          await this.runtime.db.execute(
            `UPDATE ${SCHEMA}.host_commands SET claimed_until = now() + interval '1 second' WHERE command_id = $1`,
            [row.commandId],
          );
          continue;
        }
        delivered.push(row.commandId);
      }
    } finally {
      // The batch's handed-over commands marked in one statement, also when a later one failed. A process
      // killed before it hands them over again (at least once: the agent ignores a command id it ran).
      if (delivered.length > 0) await this.markDelivered(delivered);
    }
    return delivered.length;
  }

  private async markDelivered(commandIds: readonly number[]): Promise<void> {
    await this.runtime.db.execute(
      `UPDATE ${SCHEMA}.host_commands SET delivered_at = now(), claimed_until = NULL, instance_key_sealed = NULL, image_login_sealed = NULL
        WHERE command_id = ANY($1::bigint[])`,
      [commandIds],
    );
  }

  private async deliver(row: HostCommandRow): Promise<'sent' | 'later'> {
    const waitedMs = Date.now() - row.createdAt.getTime();
    if (row.kind === 'ssh_keys') {
      // The instance's keys as they are now (the read model is written with the events): a later change wins.
      const instance = await this.instance(row.instanceId);
      if (!instance || instance.destroyed) return 'sent';
      return this.routing.deliver(row, { authorizedKeys: authorizedKeys(detailsOf(instance)) }, waitedMs);
    }
    if (row.kind === 'snapshot') return this.deliverSnapshot(row, waitedMs);
    if (row.kind === 'backup') {
      // The backup its request recorded (with the command); one that ended meanwhile has nothing to deliver.
      const backup = await pendingBackupOf(this.runtime.db, row.instanceId);
      if (!backup) return 'sent';
      const { maxBytes, timeLimitMs, bytesPerSecond } = this.backupOptions;
      return this.routing.deliver(
        row,
        {
          backup: {
            backupId: backup.backupId,
            instanceId: row.instanceId,
            maxBytes,
            timeLimitMs,
            bytesPerSecond,
          },
        },
        waitedMs,
      );
    }
    if (row.kind === 'update') {
      // The config as the read model holds it when delivered (a later update wins); the container keeps its key.
      const facts = await this.deliveryFacts(row.instanceId, row.machineId);
      if (!facts || facts.instance.destroyed) return 'sent';
      const spec = this.withAccountEnv(this.spec(row.instanceId, row.machineId, facts, ''), facts);
      return this.routing.deliver(row, { spec }, waitedMs, facts.agentMachine);
    }
    if (row.kind !== 'provision')
      return this.routing.deliver(row, row.statusMsg ? { statusMsg: row.statusMsg } : {}, waitedMs);
    const facts = await this.deliveryFacts(row.instanceId, row.machineId);
    // Destroyed meanwhile, or already reported on by its host (a redelivery): nothing to provision.
    if (!facts || facts.instance.destroyed || facts.instance.actual_status !== null) return 'sent';
    const key = row.instanceKeySealed ? this.keys.open(row.instanceKeySealed, row.instanceId) : null;
    if (key === null && facts.agentMachine) {
      await this.reporter.report(row.instanceId, {
        actualStatus: 'exited',
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: UNSEALABLE_MSG,
      });
      return 'sent';
    }
    const spec = this.spec(row.instanceId, row.machineId, facts, key ?? '');
    // The registry login travels in this command only (sealed until now; never in an event or the read model).
    const imageLogin = row.imageLoginSealed
      ? this.keys.openLogin(row.imageLoginSealed, row.instanceId)
      : null;
    if (imageLogin !== null) spec.config = { ...spec.config, imageLogin };
    return this.routing.deliver(
      row,
      { spec: this.withAccountEnv(spec, facts) },
      waitedMs,
      facts.agentMachine,
    );
  }

  /**
   * The account's environment variables (sealed until now; never in an event or the read model): the
   * instance's own env wins over a variable of the same name.
   */
  private withAccountEnv(spec: ProvisionSpec, facts: DeliveryFacts): ProvisionSpec {
    const { vars } = openEnvVars(this.envVars, Number(facts.instance.owner_id), facts.envVars);
    if (Object.keys(vars).length > 0) spec.config = { ...spec.config, env: { ...vars, ...spec.config.env } };
    return spec;
  }

  /**
   * The snapshot the instance's read model says is running (written with its event), with the registry
   * login opened from the command (sealed until now; never in an event or the read model). A snapshot that
   * finished meanwhile, or an instance destroyed, has nothing to deliver.
   */
  private async deliverSnapshot(row: HostCommandRow, waitedMs: number): Promise<'sent' | 'later'> {
    const instance = await this.instance(row.instanceId);
    const snapshot = instance && !instance.destroyed ? detailsOf(instance).snapshot : undefined;
    if (!snapshot || snapshot.status !== 'running') return 'sent';
    const login = row.imageLoginSealed ? this.keys.openLogin(row.imageLoginSealed, row.instanceId) : null;
    if (row.imageLoginSealed && login === null) {
      await this.reporter.reportSnapshot(row.instanceId, snapshot.snapshotId, {
        digest: null,
        reason:
          'the registry login could not be opened (the instance-lifecycle processes must share RIGMARKET_INSTANCE_SEAL_KEY); take the snapshot again',
      });
      return 'sent';
    }
    const request: AgentSnapshotRequest = {
      instanceId: row.instanceId,
      snapshotId: snapshot.snapshotId,
      image: snapshot.image,
      pause: snapshot.pause,
      auth: login === null ? null : (JSON.parse(login) as AgentSnapshotRequest['auth']),
      timeLimitMs: SNAPSHOT_TIME_LIMIT_MS,
    };
    return this.routing.deliver(row, { snapshot: request }, waitedMs);
  }

  /**
   * The simulated host keeps its transitions in memory: after a restart every live instance of a machine
   * no agent serves is resumed from its stored state (actual and intended), unless its provision is still
   * undelivered (the dispatcher provisions it then) or it waits for its volume.
   */
  private async resumeSimulated(): Promise<void> {
    const rows = await this.runtime.db.query<
      InstanceRow & { instance_id: number; public_ipaddr: string | null }
    >(
      `SELECT i.instance_id, i.machine_id, i.owner_id, i.actual_status, i.intended_status, i.destroyed, i.details,
              ${PUBLIC_IPADDR}
         FROM ${SCHEMA}.instances i
        WHERE NOT i.destroyed
          AND (i.actual_status IS NULL OR i.actual_status IN ('loading', 'running', 'stopped'))
          AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.pending_provisions p WHERE p.instance_id = i.instance_id)
          AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.agent_machines a WHERE a.machine_id = i.machine_id)
          AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.host_commands c
                           WHERE c.instance_id = i.instance_id AND c.kind = 'provision' AND c.delivered_at IS NULL)
        ORDER BY i.instance_id`,
    );
    for (const row of rows) {
      const instanceId = Number(row.instance_id);
      const spec = this.spec(
        instanceId,
        Number(row.machine_id),
        { instance: row, publicIpaddr: row.public_ipaddr },
        '',
      );
      this.simulated.resume(spec, row.actual_status as 'loading' | 'running' | 'stopped' | null);
    }
    if (rows.length > 0) this.logger.log(`simulated host resumed ${rows.length} instance(s)`);
  }

  private async instance(instanceId: number): Promise<InstanceRow | null> {
    const rows = await this.runtime.db.query<InstanceRow>(
      `SELECT machine_id, owner_id, actual_status, intended_status, destroyed, details FROM ${SCHEMA}.instances WHERE instance_id = $1`,
      [instanceId],
    );
    return rows[0] ?? null;
  }

  /**
   * The instance, its machine's public address, whether an agent serves the machine, and the owner's sealed
   * environment variables, in one statement (null: no such instance).
   */
  private async deliveryFacts(instanceId: number, machineId: number): Promise<DeliveryFacts | null> {
    const [row] = await this.runtime.db.query<
      InstanceRow & { public_ipaddr: string | null; agent_machine: boolean; env_vars: unknown }
    >(
      `SELECT i.machine_id, i.owner_id, i.actual_status, i.intended_status, i.destroyed, i.details,
              ${PUBLIC_IPADDR},
              EXISTS (SELECT 1 FROM ${SCHEMA}.agent_machines a WHERE a.machine_id = $2) AS agent_machine,
              ${sealedEnvVarsOf('i.owner_id')} AS env_vars
         FROM ${SCHEMA}.instances i WHERE i.instance_id = $1`,
      [instanceId, machineId],
    );
    if (!row) return null;
    const envVars = typeof row.env_vars === 'string' ? JSON.parse(row.env_vars) : row.env_vars;
    return {
      instance: row,
      publicIpaddr: row.public_ipaddr,
      agentMachine: row.agent_machine === true,
      envVars: envVars as SealedEnvVar[],
    };
  }

  private spec(
    instanceId: number,
    machineId: number,
    { instance: row, publicIpaddr }: Pick<DeliveryFacts, 'instance' | 'publicIpaddr'>,
    instanceApiKey: string,
  ): ProvisionSpec {
    const details = detailsOf(row);
    return {
      instanceId,
      machineId,
      publicIpaddr: publicIpaddr ?? details.publicIpaddr ?? null,
      config: details.config,
      targetState: row.intended_status,
      instanceApiKey,
      authorizedKeys: authorizedKeys(details),
    };
  }
}

/** The instance's machine's public address (market_machines), as a column over `instances i`. */
const PUBLIC_IPADDR = `(SELECT m.public_ipaddr FROM ${SCHEMA}.market_machines m WHERE m.machine_id = i.machine_id) AS public_ipaddr`;

const detailsOf = (row: InstanceRow): InstanceDetails =>
  typeof row.details === 'string' ? (JSON.parse(row.details) as InstanceDetails) : row.details;
