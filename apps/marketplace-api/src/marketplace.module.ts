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
      controllers: [MachinesController, OffersController],
      providers: [...machineHandlers, SearchOffersHandler],
    });
  }
}
