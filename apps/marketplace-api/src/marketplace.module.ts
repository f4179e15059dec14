import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { MachinesController } from './machines/machines.http.controller';
import {
  GpuNamesHandler,
  ListMachineHandler,
  ListMachinesHandler,
  RecordHeartbeatHandler,
  RegisterMachineHandler,
  SetMinBidHandler,
  SetVerificationHandler,
  UnlistMachineHandler,
} from './machines/machines.handlers';
import { marketplaceContext } from './marketplace.context';
import { MARKETPLACE_RUNTIME } from './marketplace.tokens';
import { OffersController } from './offers/offers.http.controller';
import { SearchOffersHandler } from './offers/offers.handlers';
import { LedgerController } from './ledger/ledger.http.controller';
import { BILLING_INTERVAL_MS, BillingMeter, DEFAULT_BILLING_INTERVAL_MS } from './ledger/billing-meter';
import { ChargeUsageHandler, GrantCreditHandler, LedgerEntriesHandler } from './ledger/ledger.handlers';
import { InstanceVolumesReactor } from './volumes/instance-volumes.reactor';
import { VolumesController } from './volumes/volumes.http.controller';
import {
  CreateVolumeHandler,
  DeleteVolumeHandler,
  ListVolumeSpaceHandler,
  ListVolumesHandler,
  SearchVolumeOffersHandler,
  UnlistVolumeSpaceHandler,
} from './volumes/volumes.handlers';
import { TemplatesController } from './templates/templates.http.controller';
import { CreateTemplateHandler, DeleteTemplateHandler, EditTemplateHandler, SearchTemplatesHandler } from './templates/templates.handlers';

const machineHandlers = [
  RegisterMachineHandler,
  ListMachineHandler,
  UnlistMachineHandler,
  SetMinBidHandler,
  SetVerificationHandler,
  RecordHeartbeatHandler,
  ListMachinesHandler,
  GpuNamesHandler,
];

export interface MarketplaceOptions {
  /** How often the billing meter charges running and stopped instances (ms; 0 = only when asked). */
  billingIntervalMs?: number;
}

function billingInterval(options: MarketplaceOptions): number {
  if (options.billingIntervalMs !== undefined) return options.billingIntervalMs;
  const fromEnv = Number(process.env.RIGMARKET_BILLING_INTERVAL_MS);
  return process.env.RIGMARKET_BILLING_INTERVAL_MS !== undefined && Number.isFinite(fromEnv) ? fromEnv : DEFAULT_BILLING_INTERVAL_MS;
}

@Module({})
export class MarketplaceModule {
  static forRoot(options: MarketplaceOptions = {}): DynamicModule {
    return contextModule({
      module: MarketplaceModule,
      definition: marketplaceContext,
      runtimeToken: MARKETPLACE_RUNTIME,
      appName: 'marketplace-api',
      controllers: [MachinesController, OffersController, TemplatesController, VolumesController, LedgerController],
      providers: [...machineHandlers, SearchOffersHandler, CreateTemplateHandler, EditTemplateHandler, DeleteTemplateHandler, SearchTemplatesHandler,
        ListVolumeSpaceHandler,
        UnlistVolumeSpaceHandler,
        CreateVolumeHandler,
        DeleteVolumeHandler,
        ListVolumesHandler,
        SearchVolumeOffersHandler,
        InstanceVolumesReactor,
        GrantCreditHandler,
        ChargeUsageHandler,
        LedgerEntriesHandler,
        { provide: BILLING_INTERVAL_MS, useValue: billingInterval(options) },
        BillingMeter,
      ],
    });
  }
}
