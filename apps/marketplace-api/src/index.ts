export { MarketplaceModule, type MarketplaceOptions } from './marketplace.module';
export { BillingMeter, type DueCharge } from './ledger/billing-meter';
export { ReliabilitySweep } from './machines/reliability-sweep';
export { marketplaceContext } from './marketplace.context';
export { MARKETPLACE_RUNTIME } from './marketplace.tokens';
export { parseOfferQuery, offerSearchSql, type OfferQuery } from './offers/offer-query';
export {
  SearchOffersHandler,
  searchOffers,
  searchOffersJson,
  type OfferView,
} from './offers/offers.handlers';
export { insertOfferRows } from './read-models/machines/offers';
export { SCHEMA as MARKETPLACE_SCHEMA } from './schema';
export { syntheticOfferRows } from './offers/synthetic-offers';
export { EXAMPLE_SEARCHES } from './offers/example-searches';
export type { OfferRow } from './offers/offer-rows';
export { ChargeRenterCommand, ChargeUsageCommand } from './ledger/ledger.handlers';
export { chargeFor } from './ledger/ledger.decider';
export { InstanceVolumesReactor } from './volumes/instance-volumes.reactor';
export { ledgerImbalances, type LedgerImbalance } from './ledger/ledger-check';
