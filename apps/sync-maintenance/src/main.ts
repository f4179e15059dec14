import 'reflect-metadata';
import { runStandalone } from '@rigmarket/http-kit';
import { SyncMaintenanceModule } from './sync-maintenance.module';

/** Distributed mode: sync-maintenance alone. */
void runStandalone('sync-maintenance', 8084, [SyncMaintenanceModule.forRoot()]);
