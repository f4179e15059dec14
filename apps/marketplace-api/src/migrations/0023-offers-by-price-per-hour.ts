import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Offer search ordered by a price per hour: `dph_total` is the type's base price plus storage_cost x the
 * request's allocated_storage / 720, and `dlperf_usd` / `flops_usd` divide by it, so no plain column orders
 * them and such a search scanned every offer its filters left (offers/offer-query.ts). The CLI always sends
 * allocated_storage, 5.0 by default; with that value as a constant these expressions are indexable, and the
 * planner (which plans each search with its parameter values) reads an ordered index and stops at the limit.
 * Each expression is written exactly as offerSearchSql writes it (OFFER_FIELDS, PRICE_COLUMN) so that the
 * planner matches it; offer-search.int-spec checks that it does. Partial like offers_by_score, without
 * `verified` (a search with -n or a bid search often leaves it out). Other storage sizes and the reserved
 * type still scan (docs/benchmarks.md, "Search index strategy").
 */
export const offersByPricePerHour: Migration = {
  id: '0023-offers-by-price-per-hour',
  async up(sql, s) {
    const dph = (price: string) => `(${price} + storage_cost * 5::float8 / 720.0)`;
    const indexes: Record<string, string> = {
      offers_by_dph_on_demand: `${dph('dph_base')}, id`,
      offers_by_dph_bid: `${dph('min_bid')}, id`,
      offers_by_dlperf_usd_on_demand: `(dlperf / NULLIF(${dph('dph_base')}, 0)) DESC NULLS LAST, id`,
      offers_by_flops_usd_on_demand: `(total_flops / NULLIF(${dph('dph_base')}, 0)) DESC NULLS LAST, id`,
    };
    for (const [name, columns] of Object.entries(indexes)) {
      await sql.execute(`CREATE INDEX ${name} ON ${s}.offers (${columns}) WHERE rentable AND NOT external`);
    }
  },
};
