import type { Migration } from '@rigmarket/event-sourcing';
import { readModels } from './0001-read-models';
import { agentMachines } from './0002-agent-machines';
import { authApiKeys } from './0003-auth-api-keys';
import { authApiKeyExpiry } from './0004-auth-api-key-expiry';
import { knownCloudConnections } from './0005-known-cloud-connections';

/** sync-maintenance's migrations in the order they run (after the core ones every context has). */
export const syncMaintenanceMigrations: readonly Migration[] = [
  readModels,
  agentMachines,
  authApiKeys,
  authApiKeyExpiry,
  knownCloudConnections,
];
