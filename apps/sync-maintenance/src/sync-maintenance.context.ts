import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';
import {
  SCHEMA,
  agentMachinesMigration,
  agentMachinesProjection,
  knownInstancesProjection,
  knownMachinesProjection,
  maintenanceWindowsProjection,
  syncJobsProjection,
  syncReadModelsMigration,
} from './sync-maintenance.read-models';

export { SCHEMA };

/**
 * Maintenance windows and sync jobs (inline read models: read-your-writes), and what the context knows
 * of the others: machine owners (marketplace), instance owners and host-agent machines (instance-lifecycle),
 * over the transport.
 */
export const syncMaintenanceContext: ContextDefinition = {
  context: 'sync',
  migrations: [
    authKeysMigration(),
    authKeysExpiryMigration(),
    syncReadModelsMigration,
    agentMachinesMigration,
  ],
  inlineProjections: [maintenanceWindowsProjection, syncJobsProjection],
  subscribedProjections: [
    authKeysProjection(SCHEMA),
    knownMachinesProjection,
    knownInstancesProjection,
    agentMachinesProjection,
  ],
};
