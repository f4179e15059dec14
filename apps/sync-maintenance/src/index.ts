export { SyncMaintenanceModule, SYNC_RUNTIME } from './sync-maintenance.module';
export { syncMaintenanceContext } from './sync-maintenance.context';
