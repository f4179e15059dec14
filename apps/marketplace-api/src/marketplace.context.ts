import type { ContextDefinition, Migration } from '@rigmarket/event-sourcing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';
import {
  SCHEMA,
  adminUsersProjection,
  machinesProjection,
  marketplaceReadModelsMigration,
  templatesProjection,
} from './marketplace.read-models';
import { billingPeriodsMigration, billingPeriodsProjection } from './ledger/billing-periods.read-model';
import {
  exactLedgerMigration,
  ledgerProjection,
  ledgerReadModelsMigration,
} from './ledger/ledger.read-models';
import { earnedChargesMigration } from './ledger/earned-charges';
import {
  instanceAllocationsMigration,
  instanceAllocationsProjection,
} from './offers/instance-allocations.read-model';
import {
  maintenanceWindowsMigration,
  maintenanceWindowsProjection,
} from './offers/maintenance-windows.read-model';
import { machineLastHeartbeatMigration } from './machines/reliability-sweep';
import { templateUsageMigration, templateUsageProjection } from './templates/template-usage.read-model';
import { volumeOffersProjection, volumesReadModelsMigration } from './volumes/volumes.read-models';

export { SCHEMA };

/** The machines read model's first shape; 0003 extends it (migrations are never edited once shipped). */
const machinesReadModel: Migration = {
  id: '0002-machines-read-model',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.machines (
        machine_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        num_gpus INTEGER NOT NULL,
        listed BOOLEAN NOT NULL DEFAULT FALSE,
        details JSONB NOT NULL DEFAULT '{}'
      )`);
    await sql.execute(`CREATE INDEX machines_by_owner ON ${s}.machines (owner_id, machine_id)`);
  },
};

export const marketplaceContext: ContextDefinition = {
  context: 'marketplace',
  migrations: [
    authKeysMigration(),
    authKeysExpiryMigration(),
    machinesReadModel,
    marketplaceReadModelsMigration,
    volumesReadModelsMigration,
    ledgerReadModelsMigration,
    instanceAllocationsMigration,
    billingPeriodsMigration,
    maintenanceWindowsMigration,
    templateUsageMigration,
    machineLastHeartbeatMigration,
    exactLedgerMigration,
    earnedChargesMigration,
  ],
  inlineProjections: [machinesProjection, templatesProjection, volumeOffersProjection, ledgerProjection],
  subscribedProjections: [
    authKeysProjection(SCHEMA),
    adminUsersProjection,
    instanceAllocationsProjection,
    billingPeriodsProjection,
    maintenanceWindowsProjection,
    templateUsageProjection,
  ],
};
