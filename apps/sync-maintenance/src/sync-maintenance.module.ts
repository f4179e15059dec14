import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { MaintenanceController } from './maintenance/maintenance.http.controller';
import {
  CancelMaintenanceHandler,
  ListMaintenancesHandler,
  ScheduleMaintenanceHandler,
} from './maintenance/maintenance.handlers';
import { syncMaintenanceContext } from './sync-maintenance.context';
import { COPY_EXECUTOR, SYNC_RUNTIME } from './sync-maintenance.tokens';
import { type CopyExecutor, UnavailableCopyExecutor } from './syncs/executor/copy-executor';
import { DockerCopyExecutor } from './syncs/executor/docker-copy.executor';
import { AgentCopyReportsReactor } from './syncs/agent-copy-reports.reactor';
import { ScheduledCloudCopiesReactor } from './syncs/scheduled-cloud-copies.reactor';
import { SyncWorkflow } from './syncs/sync-workflow';
import { CancelSyncHandler, StartSyncHandler } from './syncs/syncs.handlers';
import { SyncsController } from './syncs/syncs.http.controller';

export { SYNC_RUNTIME };

export interface SyncMaintenanceOptions {
  /** Who carries copies out (default: from the environment, see copyExecutorFromEnvironment). */
  copyExecutor?: CopyExecutor;
}

/**
 * RIGMARKET_SYNC_EXECUTOR=docker copies between containers on the engine at DOCKER_HOST (rate limit
 * RIGMARKET_SYNC_BYTES_PER_SECOND); anything else (the simulated host) fails copies with a clear message.
 */
export function copyExecutorFromEnvironment(env: NodeJS.ProcessEnv = process.env): CopyExecutor {
  if (env.RIGMARKET_SYNC_EXECUTOR !== 'docker') return new UnavailableCopyExecutor();
  const rate = Number(env.RIGMARKET_SYNC_BYTES_PER_SECOND);
  return new DockerCopyExecutor({ bytesPerSecond: Number.isFinite(rate) && rate > 0 ? rate : undefined });
}

@Module({})
export class SyncMaintenanceModule {
  static forRoot(options: SyncMaintenanceOptions = {}): DynamicModule {
    return contextModule({
      module: SyncMaintenanceModule,
      definition: syncMaintenanceContext,
      runtimeToken: SYNC_RUNTIME,
      appName: 'sync-maintenance',
      controllers: [MaintenanceController, SyncsController],
      providers: [
        { provide: COPY_EXECUTOR, useFactory: () => options.copyExecutor ?? copyExecutorFromEnvironment() },
        SyncWorkflow,
        AgentCopyReportsReactor,
        ScheduledCloudCopiesReactor,
        StartSyncHandler,
        CancelSyncHandler,
        ScheduleMaintenanceHandler,
        CancelMaintenanceHandler,
        ListMaintenancesHandler,
      ],
    });
  }
}
