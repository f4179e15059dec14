export { MarketplaceModule } from './marketplace.module';
export { marketplaceContext } from './marketplace.context';
export { MARKETPLACE_RUNTIME } from './marketplace.tokens';
