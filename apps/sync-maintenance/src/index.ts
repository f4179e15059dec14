export {
  SyncMaintenanceModule,
  SYNC_RUNTIME,
  type SyncMaintenanceOptions,
  copyExecutorFromEnvironment,
} from './sync-maintenance.module';
export { syncMaintenanceContext } from './sync-maintenance.context';
export {
  type CopyExecutor,
  type CopyJob,
  type CopyReporter,
  CopyFailure,
  UnavailableCopyExecutor,
} from './syncs/executor/copy-executor';
export {
  DockerCopyExecutor,
  type DockerCopyOptions,
  type ContainerResolver,
  labelResolver,
  containerName,
  INSTANCE_LABEL,
} from './syncs/executor/docker-copy.executor';
export { SyncWorkflow, runSyncCommand } from './syncs/sync-workflow';
