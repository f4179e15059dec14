import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { syncMaintenanceContext } from './sync-maintenance.context';

export const SYNC_RUNTIME = Symbol('SYNC_RUNTIME');

@Module({})
export class SyncMaintenanceModule {
  static forRoot(): DynamicModule {
    return contextModule({ module: SyncMaintenanceModule, definition: syncMaintenanceContext, runtimeToken: SYNC_RUNTIME, appName: 'sync-maintenance' });
  }
}
