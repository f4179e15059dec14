import { type ContextDefinition, streamFold } from '@rigmarket/event-sourcing';
import { authKeysProjection } from '@rigmarket/http-kit';
import { syncMaintenanceMigrations } from './migrations';
import { agentMachinesProjection } from './read-models/agent-machines/projection';
import { knownCloudConnectionsProjection } from './read-models/known-cloud-connections/projection';
import { knownInstancesProjection } from './read-models/known-instances/projection';
import { knownMachinesProjection } from './read-models/known-machines/projection';
import { maintenanceWindowsProjection } from './read-models/maintenance-windows/projection';
import { syncJobsProjection } from './read-models/sync-jobs/projection';
import { SCHEMA } from './schema';
import { maintenanceDecider } from './maintenance/maintenance.decider';
import { syncDecider } from './syncs/sync.decider';

export { SCHEMA };

/**
 * Maintenance windows and sync jobs (inline read models: read-your-writes), and what the context knows
 * of the others: machine owners (marketplace), instance owners and host-agent machines (instance-lifecycle),
 * over the transport. Tables: migrations/; each read model's projection and queries: read-models/<name>/.
 */
export const syncMaintenanceContext: ContextDefinition = {
  context: 'sync',
  migrations: syncMaintenanceMigrations,
  inlineProjections: [maintenanceWindowsProjection, syncJobsProjection],
  subscribedProjections: [
    authKeysProjection(SCHEMA),
    knownMachinesProjection,
    knownInstancesProjection,
    agentMachinesProjection,
    knownCloudConnectionsProjection,
  ],
  folds: { sync: streamFold(syncDecider), maintenance: streamFold(maintenanceDecider) },
};
