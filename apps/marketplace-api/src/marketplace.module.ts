import { ObjectHistoryController } from './object-history/object-history.http.controller';
import { type DynamicModule, Module } from '@nestjs/common';
import { RegistryLoginBox } from '@rigmarket/contracts';
import { contextModule } from '@rigmarket/http-kit';
import { MachinesController } from './machines/machines.http.controller';
import {
  DefragMachinesHandler,
  DeleteMachineHandler,
  GpuNamesHandler,
  ListMachineHandler,
  ListMachinesHandler,
  RecordHeartbeatHandler,
  RegisterMachineHandler,
  SetMinBidHandler,
  SetVerificationHandler,
  UnlistMachineHandler,
} from './machines/machines.handlers';
import {
  DEFAULT_RELIABILITY_SWEEP_MS,
  RELIABILITY_SWEEP_MS,
  ReliabilitySweep,
} from './machines/reliability-sweep';
import { marketplaceContext } from './marketplace.context';
import { MARKETPLACE_RUNTIME, REGISTRY_LOGIN_BOX } from './marketplace.tokens';
import { OffersController } from './offers/offers.http.controller';
import { SearchOffersHandler } from './offers/offers.handlers';
import { InvoicesV1Controller, LedgerController } from './ledger/ledger.http.controller';
import { BILLING_INTERVAL_MS, BillingMeter, DEFAULT_BILLING_INTERVAL_MS } from './ledger/billing-meter';
import { BillingHistoryHandler, SearchInvoicesHandler } from './ledger/billing-history';
import {
  ChargeRenterHandler,
  ChargeUsageHandler,
  GrantCreditHandler,
  LedgerEntriesHandler,
  EarningsHandler,
} from './ledger/ledger.handlers';
import { HostEarningsReactor } from './ledger/host-earnings.reactor';
import { CreditTransfersReactor, TransferCreditHandler } from './ledger/credit-transfers';
import { DepositsController } from './ledger/deposits.http.controller';
import { DepositHandler, DepositRefundsReactor, PrepayInstanceHandler } from './ledger/instance-deposits';
import { InstanceVolumesReactor } from './volumes/instance-volumes.reactor';
import { VolumesController } from './volumes/volumes.http.controller';
import {
  CloneVolumeHandler,
  CreateVolumeHandler,
  DeleteVolumeHandler,
  ListVolumeSpaceHandler,
  ListVolumesHandler,
  SearchVolumeOffersHandler,
  UnlistVolumeSpaceHandler,
} from './volumes/volumes.handlers';
import { TemplatesController } from './templates/templates.http.controller';
import {
  CreateTemplateHandler,
  DeleteTemplateHandler,
  EditTemplateHandler,
  SearchTemplatesHandler,
} from './templates/templates.handlers';

const machineHandlers = [
  RegisterMachineHandler,
  ListMachineHandler,
  UnlistMachineHandler,
  SetMinBidHandler,
  SetVerificationHandler,
  RecordHeartbeatHandler,
  ListMachinesHandler,
  GpuNamesHandler,
  DeleteMachineHandler,
  DefragMachinesHandler,
];

export interface MarketplaceOptions {
  /** How often the billing meter charges running and stopped instances (ms; 0 = only when asked). */
  billingIntervalMs?: number;
  /** How often silent machines' reliability is recomputed (ms; 0 = only when asked). */
  reliabilitySweepMs?: number;
  /** 32 bytes (hex or base64) sealing templates' registry passwords; shared with instance-lifecycle (default RIGMARKET_REGISTRY_KEY). */
  registryKey?: string;
}

/** An interval: the option, else the environment variable, else the default. */
function interval(option: number | undefined, envName: string, fallback: number): number {
  if (option !== undefined) return option;
  const fromEnv = Number(process.env[envName]);
  return process.env[envName] !== undefined && Number.isFinite(fromEnv) ? fromEnv : fallback;
}

@Module({})
export class MarketplaceModule {
  static forRoot(options: MarketplaceOptions = {}): DynamicModule {
    return contextModule({
      module: MarketplaceModule,
      definition: marketplaceContext,
      runtimeToken: MARKETPLACE_RUNTIME,
      appName: 'marketplace-api',
      controllers: [
        MachinesController,
        OffersController,
        TemplatesController,
        VolumesController,
        ObjectHistoryController,
        LedgerController,
        InvoicesV1Controller,
        DepositsController,
      ],
      providers: [
        {
          provide: REGISTRY_LOGIN_BOX,
          useFactory: () =>
            RegistryLoginBox.fromConfig(options.registryKey ?? process.env.RIGMARKET_REGISTRY_KEY),
        },
        ...machineHandlers,
        SearchOffersHandler,
        CreateTemplateHandler,
        EditTemplateHandler,
        DeleteTemplateHandler,
        SearchTemplatesHandler,
        ListVolumeSpaceHandler,
        UnlistVolumeSpaceHandler,
        CreateVolumeHandler,
        CloneVolumeHandler,
        DeleteVolumeHandler,
        ListVolumesHandler,
        SearchVolumeOffersHandler,
        InstanceVolumesReactor,
        GrantCreditHandler,
        ChargeUsageHandler,
        ChargeRenterHandler,
        LedgerEntriesHandler,
        EarningsHandler,
        BillingHistoryHandler,
        SearchInvoicesHandler,
        HostEarningsReactor,
        TransferCreditHandler,
        CreditTransfersReactor,
        PrepayInstanceHandler,
        DepositHandler,
        DepositRefundsReactor,
        {
          provide: BILLING_INTERVAL_MS,
          useValue: interval(
            options.billingIntervalMs,
            'RIGMARKET_BILLING_INTERVAL_MS',
            DEFAULT_BILLING_INTERVAL_MS,
          ),
        },
        BillingMeter,
        {
          provide: RELIABILITY_SWEEP_MS,
          useValue: interval(
            options.reliabilitySweepMs,
            'RIGMARKET_RELIABILITY_SWEEP_MS',
            DEFAULT_RELIABILITY_SWEEP_MS,
          ),
        },
        ReliabilitySweep,
      ],
    });
  }
}
