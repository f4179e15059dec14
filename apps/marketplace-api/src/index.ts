export { MarketplaceModule } from './marketplace.module';
export { marketplaceContext } from './marketplace.context';
export { MARKETPLACE_RUNTIME } from './marketplace.tokens';
export { parseOfferQuery, offerSearchSql, type OfferQuery } from './offers/offer-query';
export { searchOffers, type OfferView } from './offers/offers.handlers';
export { insertOfferRows, SCHEMA as MARKETPLACE_SCHEMA } from './marketplace.read-models';
export { syntheticOfferRows } from './offers/synthetic-offers';
export type { OfferRow } from './offers/offer-rows';
