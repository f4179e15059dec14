export {
  InstanceLifecycleModule,
  INSTANCE_RUNTIME,
  type InstanceLifecycleOptions,
} from './instance-lifecycle.module';
export { instanceLifecycleContext } from './instance-lifecycle.context';
export type { HostDriver, ProvisionSpec } from './host/host-driver';
export { SimulatedHostDriver, type SimulatedHostTimings } from './host/simulated-host.driver';
export { type AgentChannelOptions } from './agent/agent-channel.options';
export { type GpuMetricsOptions } from './gpu-metrics/gpu-metrics.store';
export { AgentSessions } from './agent/agent-sessions';
export { DirectoryLogStore, type LogStore } from './logs/log-store';
export { recordInterruptedRent } from './instances/testing/interrupted-rent';
export { ProvisioningRecovery } from './instances/create-instance/provisioning-recovery';
export { ScheduledJobRunner, type ScheduledRun } from './scheduled-jobs/scheduled-job.runner';
export { provisioningStreamId } from './instances/create-instance/provisioning.workflow';
export { SnapshotTimeouts } from './instances/take-snapshot/snapshot-timeouts';
export { SNAPSHOT_STALE_MS, SNAPSHOT_STALE_MSG } from './instances/snapshot.decider';
export { DirectoryBackupStore, type BackupStore } from './backups/backup-store';
export { type BackupOptions } from './backups/backup-options';
export { BackupSweeper } from './backups/backup-sweeper';
