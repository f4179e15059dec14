import { type ContextDefinition, streamFold } from '@rigmarket/event-sourcing';
import { authKeysProjection } from '@rigmarket/http-kit';
import { marketplaceMigrations } from './migrations';
import { accountsProjection } from './read-models/accounts/projection';
import { adminUsersProjection } from './read-models/admin-users/projection';
import { billingPeriodsProjection } from './read-models/billing-periods/projection';
import { instanceChargedUntilProjection } from './read-models/instance-charged-until/projection';
import { instanceDepositsProjection } from './read-models/instance-deposits/projection';
import { ledgerProjection } from './read-models/ledger/projection';
import { machinesProjection } from './read-models/machines/projection';
import { maintenanceWindowsProjection } from './read-models/maintenance-windows/projection';
import { volumeClonesProjection } from './read-models/volume-clones/projection';
import { volumeInstancesProjection } from './read-models/volume-instances/projection';
import { templateUsageProjection } from './read-models/template-usage/projection';
import { templatesProjection } from './read-models/templates/projection';
import { volumeOffersProjection } from './read-models/volume-offers/projection';
import { SCHEMA } from './schema';
import { ledgerDecider } from './ledger/ledger.decider';
import { machineDecider } from './machines/machine.decider';
import { templateDecider } from './templates/template.decider';
import { volumeDecider } from './volumes/volume.decider';

export { SCHEMA };

/**
 * marketplace-api's storage: read models of its own events (inline) and of identity's, instance-lifecycle's
 * and sync-maintenance's (subscribed). Tables: migrations/; each read model's projection and queries:
 * read-models/<name>/.
 */
export const marketplaceContext: ContextDefinition = {
  context: 'marketplace',
  migrations: marketplaceMigrations,
  inlineProjections: [
    machinesProjection,
    templatesProjection,
    volumeOffersProjection,
    ledgerProjection,
    instanceChargedUntilProjection,
    instanceDepositsProjection,
    volumeClonesProjection,
  ],
  subscribedProjections: [
    authKeysProjection(SCHEMA),
    adminUsersProjection,
    accountsProjection,
    // machines: inline for the machine streams, subscribed for the instance streams (GPU allocations)
    machinesProjection,
    billingPeriodsProjection,
    maintenanceWindowsProjection,
    templateUsageProjection,
    volumeInstancesProjection,
    // volume_clones: inline for the volume streams, subscribed for instance-lifecycle's volumecopy streams
    volumeClonesProjection,
  ],
  folds: {
    machine: streamFold(machineDecider),
    template: streamFold(templateDecider),
    volume: streamFold(volumeDecider),
    ledger: streamFold(ledgerDecider),
  },
  // The heartbeats' minute slots that reliability is computed from (kept outside the events).
  carriedTables: [{ table: 'machine_liveness', orderBy: 'machine_id, slot' }],
};
