import { Inject } from '@nestjs/common';
import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../marketplace.read-models';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import {
  COMPUTED_OUTPUT,
  type NextWindows,
  type OfferQuery,
  offerSearchSql,
  parseOfferQuery,
} from './offer-query';
import { OFFER_COLUMNS, type OfferRow } from './offer-rows';

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

const NUMERIC = new Set<string>(['id', 'driver_vers']);

function toView(row: Record<string, unknown>, query: OfferQuery): OfferView {
  const offer: Record<string, unknown> = {};
  for (const column of OFFER_COLUMNS) {
    const value = row[column];
    offer[column] = NUMERIC.has(column) && value !== null ? Number(value) : value;
  }
  for (const name of COMPUTED_OUTPUT) offer[name] = row[`q_${name}`];
  delete offer.driver_vers;
  const id = offer.id as number;
  return {
    ...(offer as Omit<
      OfferView,
      'ask_contract_id' | 'bundle_id' | 'is_bid' | 'gpu_display_active' | 'cpu_arch'
    >),
    ask_contract_id: id,
    bundle_id: id,
    is_bid: query.type === 'bid',
    gpu_display_active: false,
    cpu_arch: 'amd64',
  };
}

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
  const rows = await sql.query<Record<string, unknown>>(text, params);
  return rows.map((row) => toView(row, query));
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
