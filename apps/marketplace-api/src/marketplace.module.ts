import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { MachinesController } from './machines.http.controller';
import { marketplaceContext } from './marketplace.context';
import { MARKETPLACE_RUNTIME } from './marketplace.tokens';

@Module({})
export class MarketplaceModule {
  static forRoot(): DynamicModule {
    return contextModule({
      module: MarketplaceModule,
      definition: marketplaceContext,
      runtimeToken: MARKETPLACE_RUNTIME,
      appName: 'marketplace-api',
      controllers: [MachinesController],
    });
  }
}
