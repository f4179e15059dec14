import { type ContextDefinition, streamFold } from '@rigmarket/event-sourcing';
import { authKeysProjection } from '@rigmarket/http-kit';
import { instanceLifecycleMigrations } from './migrations';
import { accountCreditProjection } from './read-models/account-credit/projection';
import { benchmarksProjection } from './read-models/benchmarks/projection';
import { cloudConnectionsProjection } from './read-models/cloud-connections/projection';
import { envVarsProjection } from './read-models/env-vars/projection';
import { instanceBackupsProjection } from './read-models/instance-backups/projection';
import { instanceSyncsProjection } from './read-models/instance-syncs/projection';
import { instancesProjection } from './read-models/instances/projection';
import { machineMaintenanceProjection } from './read-models/machine-maintenance/projection';
import { machineReportsProjection } from './read-models/machine-reports/projection';
import { marketMachinesProjection } from './read-models/market-machines/projection';
import { marketTemplatesProjection } from './read-models/market-templates/projection';
import { marketVolumeOffersProjection } from './read-models/market-volume-offers/projection';
import { marketVolumesProjection } from './read-models/market-volumes/projection';
import { openProvisioningsProjection } from './read-models/open-provisionings/projection';
import { scheduledJobsProjection } from './read-models/scheduled-jobs/projection';
import { SCHEMA } from './schema';
import { instanceDecider } from './instances/instance.decider';

export { SCHEMA };

/**
 * Instances and the rents under way (inline read models: read-your-writes), and what the context knows
 * of the others: machines with their ask, templates, volumes and credit (marketplace), maintenance windows and syncs (sync-maintenance),
 * projected from their public events over the transport. Tables: migrations/; each read model's projection
 * and queries: read-models/<name>/.
 */
const authKeys = authKeysProjection(SCHEMA);

export const instanceLifecycleContext: ContextDefinition = {
  context: 'instance',
  migrations: instanceLifecycleMigrations,
  // auth_api_keys: this context's instance keys inline (usable the moment the instance exists), identity's
  // key events subscribed.
  inlineProjections: [
    instancesProjection,
    openProvisioningsProjection,
    authKeys,
    envVarsProjection,
    cloudConnectionsProjection,
    benchmarksProjection,
    machineReportsProjection,
    scheduledJobsProjection,
    instanceBackupsProjection,
  ],
  subscribedProjections: [
    authKeys,
    marketMachinesProjection,
    marketTemplatesProjection,
    marketVolumesProjection,
    marketVolumeOffersProjection,
    machineMaintenanceProjection,
    instanceSyncsProjection,
    accountCreditProjection,
  ],
  folds: { instance: streamFold(instanceDecider) },
  // Not in any event: instance keys (by hash), commands queued for hosts and their ids (an agent skips an id
  // it ran), sealed keys and logins of rents waiting for their volume, idempotency records, agent machines.
  carriedTables: [
    { table: 'instance_keys', orderBy: 'key_hash' },
    { table: 'host_commands', orderBy: 'command_id' },
    { table: 'pending_provisions', orderBy: 'instance_id' },
    { table: 'create_idempotency', orderBy: 'owner_id, idem_key_hash' },
    { table: 'agent_machines', orderBy: 'machine_id' },
  ],
};
