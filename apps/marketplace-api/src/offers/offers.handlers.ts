import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { type NextWindows, type OfferQuery, offerSearchSql, parseOfferQuery } from './offer-query';
import type { OfferRow } from './offer-rows';

export type OfferView = Omit<OfferRow, 'driver_vers'> & {
  ask_contract_id: number;
  bundle_id: number;
  dph_total: number;
  discounted_dph_total: number;
  dlperf_per_dphtotal: number | null;
  flops_per_dphtotal: number | null;
  duration: number | null;
  is_bid: boolean;
  gpu_display_active: boolean;
  cpu_arch: string;
};

/** Each machine's next maintenance window that has not ended (few machines at a time). */
export async function nextMaintenanceWindows(
  sql: Sql,
  nowEpochSeconds: number,
  schema = SCHEMA,
): Promise<NextWindows> {
  const rows = await sql.query<{ machine_id: number; next_start: number }>(
    `SELECT machine_id, MIN(start_time) AS next_start FROM ${schema}.maintenance_windows WHERE end_time > $1 GROUP BY machine_id`,
    [nowEpochSeconds],
  );
  return { machineIds: rows.map((r) => Number(r.machine_id)), starts: rows.map((r) => Number(r.next_start)) };
}

/** Runs a parsed search against the offers read model (offers clipped by maintenance windows). */
export async function searchOffers(
  sql: Sql,
  query: OfferQuery,
  now: Date,
  schema = SCHEMA,
): Promise<OfferView[]> {
  const nowSeconds = now.getTime() / 1000;
  const { sql: text, params } = offerSearchSql(
    query,
    schema,
    nowSeconds,
    await nextMaintenanceWindows(sql, nowSeconds, schema),
  );
  // The SELECT list shapes each row as the API's offer (offerSearchSql): no per-row reshaping here.
  return sql.query<OfferView>(text, params);
}

export class SearchOffersQuery extends Query<OfferView[]> {
  constructor(readonly body: unknown) {
    super();
  }
}

@QueryHandler(SearchOffersQuery)
export class SearchOffersHandler implements IQueryHandler<SearchOffersQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  execute(query: SearchOffersQuery): Promise<OfferView[]> {
    return searchOffers(this.runtime.db, parseOfferQuery(query.body), this.runtime.infra.clock.now());
  }
}
