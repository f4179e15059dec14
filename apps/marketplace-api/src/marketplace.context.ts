import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { marketplaceMigrations } from './migrations';
import { authKeysProjection } from '@rigmarket/http-kit';
import {
  SCHEMA,
  adminUsersProjection,
  machinesProjection,
  templatesProjection,
} from './marketplace.read-models';
import { billingPeriodsProjection } from './ledger/billing-periods.read-model';
import { ledgerProjection } from './ledger/ledger.read-models';
import { instanceAllocationsProjection } from './offers/instance-allocations.read-model';
import { maintenanceWindowsProjection } from './offers/maintenance-windows.read-model';
import { templateUsageProjection } from './templates/template-usage.read-model';
import { volumeOffersProjection } from './volumes/volumes.read-models';

export { SCHEMA };

export const marketplaceContext: ContextDefinition = {
  context: 'marketplace',
  migrations: marketplaceMigrations,
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
