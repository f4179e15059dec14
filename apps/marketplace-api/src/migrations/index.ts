import type { Migration } from '@rigmarket/event-sourcing';
import { machines } from './0001-machines';
import { machinesOffersTemplates } from './0002-machines-offers-templates';
import { volumes } from './0003-volumes';
import { ledger } from './0004-ledger';
import { instanceAllocations } from './0005-instance-allocations';
import { billingPeriods } from './0006-billing-periods';
import { maintenanceWindows } from './0007-maintenance-windows';
import { templateUsage } from './0008-template-usage';
import { machineLastHeartbeat } from './0009-machine-last-heartbeat';
import { ledgerExactMoney } from './0010-ledger-exact-money';
import { ledgerEarnedCharges } from './0011-ledger-earned-charges';
import { authApiKeys } from './0012-auth-api-keys';
import { authApiKeyExpiry } from './0013-auth-api-key-expiry';
import { machineLiveness } from './0014-machine-liveness';
import { machinesWithAllocations } from './0015-machines-with-allocations';
import { billingRateMicros } from './0016-billing-rate-micros';
import { instanceChargedUntil } from './0017-instance-charged-until';
import { accountsAndTransfers } from './0018-accounts-and-transfers';
import { volumeInstances } from './0019-volume-instances';
import { instanceDeposits } from './0020-instance-deposits';
import { allocationRenters } from './0021-allocation-renters';
import { volumeClones } from './0022-volume-clones';
import { offersByPricePerHour } from './0023-offers-by-price-per-hour';

/** marketplace-api's migrations, one file each, in the order they run (after the core ones every context has). */
export const marketplaceMigrations: readonly Migration[] = [
  machines,
  machinesOffersTemplates,
  volumes,
  ledger,
  instanceAllocations,
  billingPeriods,
  maintenanceWindows,
  templateUsage,
  machineLastHeartbeat,
  ledgerExactMoney,
  ledgerEarnedCharges,
  authApiKeys,
  authApiKeyExpiry,
  machineLiveness,
  machinesWithAllocations,
  billingRateMicros,
  instanceChargedUntil,
  accountsAndTransfers,
  volumeInstances,
  instanceDeposits,
  allocationRenters,
  volumeClones,
  offersByPricePerHour,
];
