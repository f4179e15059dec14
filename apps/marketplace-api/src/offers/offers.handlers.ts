import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { jsonObjectText } from '@rigmarket/http-kit';
import { maintenanceWindowsProjection } from '../read-models/maintenance-windows/projection';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { type OfferQuery, offerSearchSql, parseOfferQuery } from './offer-query';
import type { OfferRow } from './offer-rows';
import {
  MaintenanceWindowsCache,
  OfferSearchCache,
  type PendingWindows,
  type SearchAnswer,
  type TimedAnswer,
  cacheableQuery,
} from './offer-search-cache';

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
): Promise<PendingWindows> {
  // changes: the next instant a window of the machine starts or ends (a search's answer may change then).
  const rows = await sql.query<{ machine_id: number; next_start: number; changes: number }>(
    `SELECT machine_id, MIN(start_time) AS next_start,
            MIN(CASE WHEN start_time > $1 THEN start_time ELSE end_time END) AS changes
       FROM ${schema}.maintenance_windows WHERE end_time > $1 GROUP BY machine_id`,
    [nowEpochSeconds],
  );
  return {
    machineIds: rows.map((r) => Number(r.machine_id)),
    starts: rows.map((r) => Number(r.next_start)),
    changesAt: rows.length > 0 ? Math.min(...rows.map((r) => Number(r.changes))) : null,
  };
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
  return (await searchOffersTimed(sql, query, now, schema)).text;
}

/**
 * The search's answer (searchOffersJson) and the next instant after `now` at which time alone can change it
 * (offer-search-cache.ts, cacheableQuery): the earliest end (listing end or window start) after now among the
 * offers it returned, and the earliest start or end of a pending maintenance window of any machine. In
 * between, only each offer's `duration` moves (it counts down from now). `pending`: the pending windows at
 * `now` when the caller has them (MaintenanceWindowsCache), else they are read first.
 */
export async function searchOffersTimed(
  sql: Sql,
  query: OfferQuery,
  now: Date,
  schema = SCHEMA,
  pending?: PendingWindows,
): Promise<TimedAnswer> {
  const nowSeconds = now.getTime() / 1000;
  const windows = pending ?? (await nextMaintenanceWindows(sql, nowSeconds, schema));
  const { sql: text, params } = offerSearchSql(query, schema, nowSeconds, windows);
  // The aggregate reads the LIMIT subquery's rows in their order. string_agg rather than json_agg, whose
  // separator (a comma, a newline and a space) would make the text differ from JSON.stringify's. $2 is now.
  const [row] = await sql.query<{ offers: string; next_end: number | null }>(
    `SELECT '[' || COALESCE(string_agg(row_to_json(o)::text, ','), '') || ']' AS offers,
            MIN(o.end_date) FILTER (WHERE o.end_date > $2::float8) AS next_end
       FROM (${text}) o`,
    params,
  );
  const changes = [row?.next_end, windows.changesAt]
    .filter((t): t is number => t !== null && t !== undefined)
    .map((t) => Number(t) * 1000);
  return {
    text: row?.offers ?? '[]',
    changesAtMs: changes.length > 0 ? Math.min(...changes) : Number.POSITIVE_INFINITY,
  };
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

/** A search; its answer is the whole answer `{"offers": [...]}` as JSON text (searchOffersJson inside). */
export class SearchOffersQuery extends Query<SearchAnswer> {
  constructor(readonly body: unknown) {
    super();
  }
}

/** The read-model tables a search reads: a change to either drops every cached answer. */
export const OFFER_SEARCH_TABLES: readonly string[] = [
  `${SCHEMA}.offers`,
  ...maintenanceWindowsProjection.tables,
];

@QueryHandler(SearchOffersQuery)
export class SearchOffersHandler implements IQueryHandler<SearchOffersQuery> {
  private cache: OfferSearchCache | undefined;
  private windowsCache: MaintenanceWindowsCache | undefined;

  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  /** Answers kept while the offers read model is unchanged (offer-search-cache.ts); made on first use. */
  get answers(): OfferSearchCache {
    return (this.cache ??= new OfferSearchCache(this.runtime.db.watchReadModels(OFFER_SEARCH_TABLES)));
  }

  /** The pending maintenance windows every search reads before its own statement; made on first use. */
  get windows(): MaintenanceWindowsCache {
    return (this.windowsCache ??= new MaintenanceWindowsCache(
      this.runtime.db.watchReadModels(maintenanceWindowsProjection.tables),
    ));
  }

  async execute(search: SearchOffersQuery): Promise<SearchAnswer> {
    const query = parseOfferQuery(search.body);
    const now = this.runtime.infra.clock.now();
    const fresh = async (): Promise<TimedAnswer> => {
      const db = this.runtime.db;
      const windows = await this.windows.at(now.getTime(), () =>
        nextMaintenanceWindows(db, now.getTime() / 1000),
      );
      const found = await searchOffersTimed(db, query, now, SCHEMA, windows);
      return { text: jsonObjectText({ offers: found.text }), changesAtMs: found.changesAtMs };
    };
    if (!cacheableQuery(query)) return { text: (await fresh()).text };
    return this.answers.answer(JSON.stringify(query), now.getTime(), fresh);
  }
}
