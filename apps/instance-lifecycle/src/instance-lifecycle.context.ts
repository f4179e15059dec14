import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { instanceLifecycleMigrations } from './migrations';
import { authKeysProjection } from '@rigmarket/http-kit';
import {
  SCHEMA,
  instancesProjection,
  marketMachinesProjection,
  marketTemplatesProjection,
} from './instance-lifecycle.read-models';
import { accountCreditProjection } from './instances/account-credit';
import { marketVolumeOffersProjection, marketVolumesProjection } from './instances/market-volumes.read-model';
import { instanceSyncsProjection, machineMaintenanceProjection } from './instances/sync-maintenance-notices';

export { SCHEMA };

/**
 * Instances (inline read model: read-your-writes), and what the context knows of the marketplace:
 * machines with their ask and templates, projected from marketplace's public events over the transport.
 */
export const instanceLifecycleContext: ContextDefinition = {
  context: 'instance',
  migrations: instanceLifecycleMigrations,
  inlineProjections: [instancesProjection],
  subscribedProjections: [
    authKeysProjection(SCHEMA),
    marketMachinesProjection,
    marketTemplatesProjection,
    marketVolumesProjection,
    marketVolumeOffersProjection,
    machineMaintenanceProjection,
    instanceSyncsProjection,
    accountCreditProjection,
  ],
};
