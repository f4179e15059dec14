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
import { ChargeUsageHandler, GrantCreditHandler, LedgerEntriesHandler } from './ledger/ledger.handlers';
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

@Module({})
export class MarketplaceModule {
  static forRoot(): DynamicModule {
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
        GrantCreditHandler,
        ChargeUsageHandler,
        LedgerEntriesHandler,
      ],
    });
  }
}
