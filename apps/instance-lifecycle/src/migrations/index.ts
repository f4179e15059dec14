import type { Migration } from '@rigmarket/event-sourcing';
import { readModels } from './0001-read-models';
import { createIdempotency } from './0002-create-idempotency';
import { createIdempotencySealed } from './0003-create-idempotency-sealed';
import { marketMachinesVerification } from './0004-market-machines-verification';
import { marketVolumesAndVms } from './0005-market-volumes-and-vms';
import { marketMachinesGeolocation } from './0006-market-machines-geolocation';
import { marketVolumeOffers } from './0007-market-volume-offers';
import { accountCredit } from './0008-account-credit';
import { agentMachines } from './0009-agent-machines';
import { authApiKeys } from './0010-auth-api-keys';
import { authApiKeyExpiry } from './0011-auth-api-key-expiry';
import { hostCommands } from './0012-host-commands';
import { pendingProvisionLogin } from './0013-pending-provision-login';
import { maintenanceAndSyncNotices } from './0014-maintenance-and-sync-notices';
import { openProvisionings } from './0015-open-provisionings';
import { envVars } from './0016-env-vars';
import { cloudConnections } from './0017-cloud-connections';
import { gpuMetrics } from './0018-gpu-metrics';
import { benchmarks } from './0019-benchmarks';
import { machineReports } from './0020-machine-reports';
import { scheduledJobs } from './0021-scheduled-jobs';
import { instanceBackups } from './0022-instance-backups';

/** instance-lifecycle's migrations, one file each, in the order they run (after the core ones every context has). */
export const instanceLifecycleMigrations: readonly Migration[] = [
  readModels,
  createIdempotency,
  createIdempotencySealed,
  marketMachinesVerification,
  marketVolumesAndVms,
  marketMachinesGeolocation,
  marketVolumeOffers,
  accountCredit,
  agentMachines,
  authApiKeys,
  authApiKeyExpiry,
  hostCommands,
  pendingProvisionLogin,
  maintenanceAndSyncNotices,
  openProvisionings,
  envVars,
  cloudConnections,
  gpuMetrics,
  benchmarks,
  machineReports,
  scheduledJobs,
  instanceBackups,
];
