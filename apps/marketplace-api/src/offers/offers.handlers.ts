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

/**
 * Runs a parsed search against the offers read model (offers clipped by maintenance windows) and answers the
 * offers as one JSON array text, in the search's order. The SELECT list shapes each row as the API's offer
 * (offerSearchSql) and the database aggregates the rows into one JSON value: the handler neither decodes
 * 100 rows of 50 fields nor serialises them again, it sends the text (offers.http.controller.ts). A float8
 * the database writes in exponent form (below 1e-4 or from 1e15) is the same number to a JSON reader.
 */
export async function searchOffersJson(
  sql: Sql,
  query: OfferQuery,
  now: Date,
  schema = SCHEMA,
): Promise<string> {
  const nowSeconds = now.getTime() / 1000;
  const { sql: text, params } = offerSearchSql(
    query,
    schema,
    nowSeconds,
    await nextMaintenanceWindows(sql, nowSeconds, schema),
  );
  // The aggregate reads the LIMIT subquery's rows in their order. string_agg rather than json_agg, whose
  // separator (a comma, a newline and a space) would make the text differ from JSON.stringify's.
  const [row] = await sql.query<{ offers: string }>(
    `SELECT '[' || COALESCE(string_agg(row_to_json(o)::text, ','), '') || ']' AS offers FROM (${text}) o`,
    params,
  );
  return row?.offers ?? '[]';
}

/** The same search as objects (tests and in-process callers). */
export async function searchOffers(
  sql: Sql,
  query: OfferQuery,
  now: Date,
  schema = SCHEMA,
): Promise<OfferView[]> {
  return JSON.parse(await searchOffersJson(sql, query, now, schema)) as OfferView[];
}

/** A search; its answer is the offers as JSON text (searchOffersJson). */
export class SearchOffersQuery extends Query<string> {
  constructor(readonly body: unknown) {
    super();
  }
}

@QueryHandler(SearchOffersQuery)
export class SearchOffersHandler implements IQueryHandler<SearchOffersQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  execute(query: SearchOffersQuery): Promise<string> {
    return searchOffersJson(this.runtime.db, parseOfferQuery(query.body), this.runtime.infra.clock.now());
  }
}
