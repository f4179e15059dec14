import 'reflect-metadata';
import { runStandalone } from '@rigmarket/http-kit';
import { MarketplaceModule } from './marketplace.module';

/** Distributed mode: marketplace-api alone. */
void runStandalone('marketplace-api', 8082, [MarketplaceModule.forRoot()]);
