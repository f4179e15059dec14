import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';
import {
  SCHEMA,
  createIdempotencyMigration,
  marketMachinesVerificationMigration,
  instanceReadModelsMigration,
  instancesProjection,
  marketMachinesProjection,
  marketTemplatesProjection,
} from './instance-lifecycle.read-models';
import { agentMachinesMigration } from './agent/agent-machines';
import { hostCommandsMigration } from './host/host-commands';
import { accountCreditMigration, accountCreditProjection } from './instances/account-credit';
import { sealIdempotencyMigration } from './instances/idempotency';
import {
  marketMachinesGeolocationMigration,
  marketVolumeOffersMigration,
  marketVolumeOffersProjection,
  marketVolumesMigration,
  marketVolumesProjection,
  pendingProvisionLoginMigration,
} from './instances/market-volumes.read-model';
import {
  instanceSyncsProjection,
  machineMaintenanceProjection,
  syncMaintenanceNoticesMigration,
} from './instances/sync-maintenance-notices';

export { SCHEMA };

/**
 * Instances (inline read model: read-your-writes), and what the context knows of the marketplace:
 * machines with their ask and templates, projected from marketplace's public events over the transport.
 */
export const instanceLifecycleContext: ContextDefinition = {
  context: 'instance',
  migrations: [
    authKeysMigration(),
    authKeysExpiryMigration(),
    instanceReadModelsMigration,
    createIdempotencyMigration,
    sealIdempotencyMigration,
    marketMachinesVerificationMigration,
    marketVolumesMigration,
    marketMachinesGeolocationMigration,
    syncMaintenanceNoticesMigration,
    agentMachinesMigration,
    marketVolumeOffersMigration,
    hostCommandsMigration,
    accountCreditMigration,
    pendingProvisionLoginMigration,
  ],
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
