import {
  type DynamicModule,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  RequestMethod,
} from '@nestjs/common';
import { RegistryLoginBox } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { AUTH_STRATEGIES, contextModule } from '@rigmarket/http-kit';
import {
  AGENT_CHANNEL_OPTIONS,
  type AgentChannelOptions,
  agentChannelOptions,
} from './agent/agent-channel.options';
import { AgentChannelServer } from './agent/agent-channel.server';
import { BACKUP_OPTIONS, type BackupOptions, backupOptions } from './backups/backup-options';
import { BackupReceiver } from './backups/backup-receiver';
import { type BackupStore, DirectoryBackupStore } from './backups/backup-store';
import { BackupSweeper } from './backups/backup-sweeper';
import { InstanceBackupsController } from './backups/instance-backups.http.controller';
import { AgentCopyReactor } from './agent/agent-copy.reactor';
import { AgentCopyRelay } from './agent/agent-copy.relay';
import { VolumeCopyReactor } from './agent/volume-copy.reactor';
import { AgentSessions } from './agent/agent-sessions';
import { RoutingHostDriver } from './agent/routing-host.driver';
import { HostCommandDispatcher } from './host/host-command.dispatcher';
import { HostReporter } from './host/host-reporter';
import {
  REALISTIC_TIMINGS,
  SimulatedHostDriver,
  type SimulatedHostTimings,
} from './host/simulated-host.driver';
import { instanceLifecycleContext } from './instance-lifecycle.context';
import { CachedPollMiddleware } from './instances/queries/cached-poll.middleware';
import { EnvVarBox } from './env-vars/env-var-box';
import { EnvVarsController } from './env-vars/env-vars.http.controller';
import { CloudConnectionsController } from './cloud-connections/cloud-connections.http.controller';
import { GpuMetricsController } from './gpu-metrics/gpu-metrics.http.controller';
import { BenchmarksController } from './benchmarks/benchmarks.http.controller';
import {
  DEFAULT_GPU_METRICS,
  GPU_METRICS_OPTIONS,
  type GpuMetricsOptions,
  GpuMetricsStore,
} from './gpu-metrics/gpu-metrics.store';
import { DefaultJobRestartReactor } from './host-machines/default-job.reactor';
import { HOST_MACHINE_HANDLERS } from './host-machines/host-machines.handlers';
import { HostMachinesController } from './host-machines/host-machines.http.controller';
import {
  BACKUP_STORE,
  ENV_VAR_BOX,
  HOST_DRIVER,
  INSTANCE_RUNTIME,
  LOG_STORE,
  PENDING_KEY_BOX,
  REGISTRY_LOGIN_BOX,
  PROVISIONING_RECOVERY_OPTIONS,
  SCHEDULED_JOBS_INTERVAL_MS,
  SIMULATED_HOST_TIMINGS,
} from './instance-lifecycle.tokens';
import {
  DEFAULT_SCHEDULED_JOBS_INTERVAL_MS,
  ScheduledJobRunner,
} from './scheduled-jobs/scheduled-job.runner';
import { ScheduledJobsController } from './scheduled-jobs/scheduled-jobs.http.controller';
import { HandOffCloudCopyHandler } from './scheduled-jobs/scheduled-call';
import { CreditExhaustedReactor } from './instances/credit-exhausted.reactor';
import { PendingKeyBox } from './instances/pending-keys';
import { VolumeForInstanceReactor } from './instances/volume-for-instance.reactor';
import { InstanceKeyStrategy } from './instances/instance-key.strategy';
// rigmarket_instances{state}, read when /metrics is scraped
import './instances/instance-metrics';
import { DirectoryLogStore, type LogStore } from './logs/log-store';
import { S3LogStore } from './logs/s3-log-store';
import { LogsController } from './logs/logs.http.controller';
import { RequestLogsHandler } from './logs/logs.handlers';
import { ExecuteHandler } from './logs/execute.handlers';
import { UpdateInstanceHandler } from './instances/update-instance/update-instance.handler';
import { AsksController } from './instances/create-instance/asks.http.controller';
import { InstancesV0Controller, InstancesV1Controller } from './instances/instances.http.controller';
import { InstanceHistoryController } from './instances/queries/instance-history.http.controller';
import { LaunchController } from './instances/launch-instance/launch.http.controller';
import { InstanceSshKeysController } from './instances/instance-ssh-keys/instance-ssh-keys.http.controller';
import { PriceIncreasesController } from './instances/price-increases/price-increases.http.controller';
import { TakeSnapshotController } from './instances/take-snapshot/take-snapshot.http.controller';
import { SnapshotTimeouts } from './instances/take-snapshot/snapshot-timeouts';
import { LaunchInstanceHandler } from './instances/launch-instance/launch';
import {
  DEFAULT_PROVISIONING_RECOVERY,
  ProvisioningRecovery,
  type ProvisioningRecoveryOptions,
} from './instances/create-instance/provisioning-recovery';
import { INSTANCE_HANDLERS } from './instances/instance-handlers';
import { SseConnections, sseOptionsFromEnvironment } from './streams/sse';
import { InstanceStreamsController } from './streams/streams.http.controller';

export { INSTANCE_RUNTIME };

export interface InstanceLifecycleOptions {
  /** Timings of the simulated host driver (short in tests). */
  simulatedHost?: Partial<SimulatedHostTimings>;
  /** Where uploaded logs go (default: S3 when RIGMARKET_LOG_S3_BUCKET is set, else an owner-only local directory, defaultLogDir()). */
  logStore?: LogStore;
  /** Heartbeat and disconnection limits of the host-agent channel (defaults: agent-channel.options.ts). */
  agentChannel?: Partial<AgentChannelOptions>;
  /** 32 bytes (hex or base64) sealing the keys of instances waiting for their volume and the accounts' environment variables (default RIGMARKET_INSTANCE_SEAL_KEY). */
  sealKey?: string;
  /** 32 bytes (hex or base64) opening templates' registry passwords, as marketplace's (default RIGMARKET_REGISTRY_KEY). */
  registryKey?: string;
  /** When an interrupted rent is given up and how often they are looked for (defaults: provisioning-recovery.ts). */
  provisioningRecovery?: Partial<ProvisioningRecoveryOptions>;
  /** Resolution and retention of the host agents' GPU samples (defaults: gpu-metrics.store.ts). */
  gpuMetrics?: Partial<GpuMetricsOptions>;
  /** Where instance backups go (default: an owner-only local directory, defaultBackupDir()). */
  backupStore?: BackupStore;
  /** Bounds of instance backups (defaults: backups/backup-options.ts, RIGMARKET_BACKUP_*). */
  backups?: Partial<BackupOptions>;
  /** How often due scheduled jobs are run (ms; default RIGMARKET_SCHEDULED_JOBS_INTERVAL_MS, else 60 000; 0 = only when asked). */
  scheduledJobsIntervalMs?: number;
}

function scheduledJobsInterval(option: number | undefined): number {
  const fromEnv = Number(process.env.RIGMARKET_SCHEDULED_JOBS_INTERVAL_MS);
  if (option !== undefined) return option;
  return process.env.RIGMARKET_SCHEDULED_JOBS_INTERVAL_MS !== undefined && Number.isFinite(fromEnv)
    ? fromEnv
    : DEFAULT_SCHEDULED_JOBS_INTERVAL_MS;
}

@Module({})
export class InstanceLifecycleModule implements NestModule {
  /** The renter's poll answered from its cache before the route's guard and pipeline (cached-poll.middleware.ts). */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(CachedPollMiddleware).forRoutes({ path: 'api/v0/instances', method: RequestMethod.GET });
  }

  static forRoot(options: InstanceLifecycleOptions = {}): DynamicModule {
    return contextModule({
      module: InstanceLifecycleModule,
      definition: instanceLifecycleContext,
      runtimeToken: INSTANCE_RUNTIME,
      appName: 'instance-lifecycle',
      controllers: [
        AsksController,
        LaunchController,
        LogsController,
        // before InstancesV0Controller: `instances/events` and `instances/pending-price-increases` are not ids
        InstanceStreamsController,
        PriceIncreasesController,
        InstancesV0Controller,
        InstanceHistoryController,
        InstancesV1Controller,
        InstanceSshKeysController,
        TakeSnapshotController,
        EnvVarsController,
        CloudConnectionsController,
        GpuMetricsController,
        BenchmarksController,
        HostMachinesController,
        ScheduledJobsController,
        InstanceBackupsController,
      ],
      providers: [
        {
          provide: AUTH_STRATEGIES,
          inject: [INSTANCE_RUNTIME],
          useFactory: (runtime: ContextRuntime) => [new InstanceKeyStrategy(runtime)],
        },
        { provide: SIMULATED_HOST_TIMINGS, useValue: { ...REALISTIC_TIMINGS, ...options.simulatedHost } },
        {
          provide: LOG_STORE,
          useValue: options.logStore ?? S3LogStore.fromEnvironment() ?? new DirectoryLogStore(),
        },
        { provide: BACKUP_STORE, useValue: options.backupStore ?? new DirectoryBackupStore() },
        { provide: BACKUP_OPTIONS, useValue: backupOptions(options.backups) },
        BackupReceiver,
        BackupSweeper,
        RequestLogsHandler,
        ExecuteHandler,
        UpdateInstanceHandler,
        { provide: SseConnections, useFactory: () => new SseConnections(sseOptionsFromEnvironment()) },
        HostReporter,
        SnapshotTimeouts,
        SimulatedHostDriver,
        { provide: AGENT_CHANNEL_OPTIONS, useValue: agentChannelOptions(options.agentChannel) },
        {
          provide: REGISTRY_LOGIN_BOX,
          useFactory: () =>
            RegistryLoginBox.fromConfig(options.registryKey ?? process.env.RIGMARKET_REGISTRY_KEY),
        },
        {
          provide: PENDING_KEY_BOX,
          useFactory: () =>
            PendingKeyBox.fromConfig(options.sealKey ?? process.env.RIGMARKET_INSTANCE_SEAL_KEY),
        },
        {
          provide: ENV_VAR_BOX,
          useFactory: () => EnvVarBox.fromConfig(options.sealKey ?? process.env.RIGMARKET_INSTANCE_SEAL_KEY),
        },
        { provide: GPU_METRICS_OPTIONS, useValue: { ...DEFAULT_GPU_METRICS, ...options.gpuMetrics } },
        GpuMetricsStore,
        AgentSessions,
        AgentCopyRelay,
        AgentCopyReactor,
        VolumeCopyReactor,
        AgentChannelServer,
        RoutingHostDriver,
        // Machines with a connected host agent get its commands; the others stay simulated.
        { provide: HOST_DRIVER, useExisting: RoutingHostDriver },
        // Delivers host_commands (written with the instance events) to the hosts.
        HostCommandDispatcher,
        ...INSTANCE_HANDLERS,
        ...HOST_MACHINE_HANDLERS,
        DefaultJobRestartReactor,
        {
          provide: PROVISIONING_RECOVERY_OPTIONS,
          useValue: { ...DEFAULT_PROVISIONING_RECOVERY, ...options.provisioningRecovery },
        },
        // Gives up the rents a crash interrupted (the provisioning workflow's streams say how far they got).
        ProvisioningRecovery,
        CreditExhaustedReactor,
        VolumeForInstanceReactor,
        LaunchInstanceHandler,
        {
          provide: SCHEDULED_JOBS_INTERVAL_MS,
          useValue: scheduledJobsInterval(options.scheduledJobsIntervalMs),
        },
        ScheduledJobRunner,
        HandOffCloudCopyHandler,
      ],
    });
  }
}
