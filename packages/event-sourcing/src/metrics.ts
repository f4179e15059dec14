import { CONTEXT_SCHEMAS, type ContextName } from '@rigmarket/contracts';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from './database';
import { parkedEvents } from './dead-letters';
import { LAG_SCAN_NEWEST, projectionLag } from './projection-lag';
import type { Projection } from './projections';

/**
 * The process's one Prometheus registry (docs/operations.md, Metrics). Every context a process runs records
 * into it, labelled with its `context`; the embedded platform therefore serves all four on one `/metrics`.
 * Counters and histograms are updated where the work happens; the gauges that need a query (outbox depth,
 * projection lag, parked events, reactor queues, instances by state) are computed when scraped, from the
 * contexts this process runs, with a short cache and a time limit: nothing polls between scrapes.
 */
export const metricsRegistry = new Registry();

/** How long one scrape's database figures are reused (several gauges share one pass). */
export const SCRAPE_CACHE_MS = 2_000;
/** A scrape's queries for one context that take longer than this are given up (that context is left out). */
export const SCRAPE_TIMEOUT_MS = 3_000;

const registers = [metricsRegistry];

/** The context whose schema this is (the schema itself for one that is none of the four, e.g. in a test). */
export function contextOfSchema(schema: string): string {
  return Object.entries(CONTEXT_SCHEMAS).find(([, s]) => s === schema)?.[0] ?? schema;
}

export const eventsAppended = new Counter({
  name: 'rigmarket_events_appended_total',
  help: "Events appended to a context's store by committed commands",
  labelNames: ['context', 'stream_type'] as const,
  registers,
});

/**
 * Statements and transactions this process sent to its database (BEGIN and COMMIT not counted as
 * statements): what a request or a delivery costs in round trips (bench/: statements per rent).
 */
export const databaseStatements = new Counter({
  name: 'rigmarket_db_statements_total',
  help: 'Statements sent to the database (queries and writes; BEGIN/COMMIT not included)',
  registers,
});

export const databaseTransactions = new Counter({
  name: 'rigmarket_db_transactions_total',
  help: 'Transactions begun (committed or rolled back)',
  registers,
});

export const outboxPublished = new Counter({
  name: 'rigmarket_outbox_published_total',
  help: 'Outbox rows the relay handed to the transport (acknowledged)',
  labelNames: ['context'] as const,
  registers,
});

export const outboxRelayLag = new Histogram({
  name: 'rigmarket_outbox_relay_lag_seconds',
  help: "From an event's occurrence to the transport's acknowledgement of it (per published event)",
  labelNames: ['context'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers,
});

export const projectionEventsHandled = new Counter({
  name: 'rigmarket_projection_events_total',
  help: 'Delivered events a subscribed projection handled (applied, skipped as seen, or parked)',
  labelNames: ['context', 'projection'] as const,
  registers,
});

export const reactorRuns = new Counter({
  name: 'rigmarket_reactor_runs_total',
  help: 'Reactor work items run, by outcome (done or failed; a failed one is retried later)',
  labelNames: ['context', 'reactor', 'outcome'] as const,
  registers,
});

/** What a scrape-time gauge reads its figures from: a context this process runs. */
export interface MeteredContext {
  context: ContextName;
  schema: string;
  db: Database;
  subscribedProjections: readonly Projection[];
  reactorNames: () => readonly string[];
  reactorMaxAttempts: number;
}

/** The contexts running in this process (ContextRuntime adds itself when started, removes itself when stopped). */
const metered = new Set<MeteredContext>();

export function meterContext(context: MeteredContext): () => void {
  metered.add(context);
  return () => metered.delete(context);
}

/** The running contexts, for gauges of one context's own tables (e.g. instances by state). */
export function meteredContexts(): MeteredContext[] {
  return [...metered];
}

export const scrapeErrors = new Counter({
  name: 'rigmarket_scrape_errors_total',
  help: "Scrapes whose figures for a context could not be read in time (that context's gauges left out)",
  labelNames: ['context'] as const,
  registers,
});

/** Resolves with the promise's value, or rejects once `ms` passed. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/**
 * A gauge computed when scraped: `compute` runs at most once per SCRAPE_CACHE_MS (concurrent scrapes share
 * it) and each context's part within SCRAPE_TIMEOUT_MS; a context whose part fails or times out is left out
 * and counted in rigmarket_scrape_errors_total.
 */
export function scrapeGauge(options: {
  name: string;
  help: string;
  labelNames: readonly string[];
  compute: (context: MeteredContext) => Promise<Sample[]>;
}): Gauge {
  let cached: { at: number; samples: Promise<Sample[]> } | undefined;
  const read = (): Promise<Sample[]> => {
    if (cached && Date.now() - cached.at < SCRAPE_CACHE_MS) return cached.samples;
    const samples = Promise.all(
      [...metered].map((context) =>
        withTimeout(options.compute(context), SCRAPE_TIMEOUT_MS).catch(() => {
          scrapeErrors.inc({ context: context.context });
          return [] as Sample[];
        }),
      ),
    ).then((parts) => parts.flat());
    cached = { at: Date.now(), samples };
    return samples;
  };
  return new Gauge({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers,
    async collect() {
      const samples = await read();
      this.reset();
      for (const sample of samples) this.set(sample.labels, sample.value);
    },
  });
}

/** One query per context for both outbox gauges (cached: the second gauge reuses the first's answer). */
const outboxState = new WeakMap<
  MeteredContext,
  { at: number; row: Promise<{ depth: number; age: number }> }
>();
function outboxOf(context: MeteredContext): Promise<{ depth: number; age: number }> {
  const hit = outboxState.get(context);
  if (hit && Date.now() - hit.at < SCRAPE_CACHE_MS) return hit.row;
  const row = context.db
    .query<{ depth: string; age: string | null }>(
      `SELECT count(*)::text AS depth, extract(epoch FROM now() - min(e.recorded_at))::text AS age
         FROM ${context.schema}.outbox o JOIN ${context.schema}.events e ON e.global_position = o.global_position
        WHERE o.published_at IS NULL`,
    )
    .then(([r]) => ({ depth: Number(r?.depth ?? 0), age: Number(r?.age ?? 0) }));
  outboxState.set(context, { at: Date.now(), row });
  return row;
}

scrapeGauge({
  name: 'rigmarket_outbox_depth',
  help: 'Outbox rows not yet published (read when scraped)',
  labelNames: ['context'],
  compute: async (c) => [{ labels: { context: c.context }, value: (await outboxOf(c)).depth }],
});

scrapeGauge({
  name: 'rigmarket_outbox_oldest_unpublished_seconds',
  help: 'Age of the oldest unpublished outbox row: how far the relay is behind (0 when none)',
  labelNames: ['context'],
  compute: async (c) => [{ labels: { context: c.context }, value: (await outboxOf(c)).age }],
});

const lagState = new WeakMap<
  MeteredContext,
  { at: number; rows: Promise<Array<{ projection: string; events: number; seconds: number }>> }
>();
function lagOf(context: MeteredContext) {
  const hit = lagState.get(context);
  if (hit && Date.now() - hit.at < SCRAPE_CACHE_MS) return hit.rows;
  const rows = (async () => {
    const found: Array<{ projection: string; events: number; seconds: number }> = [];
    for (const projection of context.subscribedProjections) {
      const lag = await projectionLag(context.db, context.schema, projection, {
        subscribedOnly: true,
        newest: LAG_SCAN_NEWEST,
      });
      if (lag) found.push({ projection: projection.name, events: lag.events, seconds: lag.oldestMs / 1000 });
    }
    return found;
  })();
  lagState.set(context, { at: Date.now(), rows });
  return rows;
}

scrapeGauge({
  name: 'rigmarket_projection_lag_events',
  help: "Source events a subscribed projection has not applied yet, among the newest 1,000 of each source stream type (only where its sources' stores share the database)",
  labelNames: ['context', 'projection'],
  compute: async (c) =>
    (await lagOf(c)).map((l) => ({
      labels: { context: c.context, projection: l.projection },
      value: l.events,
    })),
});

scrapeGauge({
  name: 'rigmarket_projection_lag_seconds',
  help: 'Age of the oldest source event a subscribed projection has not applied yet (0 when caught up)',
  labelNames: ['context', 'projection'],
  compute: async (c) =>
    (await lagOf(c)).map((l) => ({
      labels: { context: c.context, projection: l.projection },
      value: l.seconds,
    })),
});

scrapeGauge({
  name: 'rigmarket_parked_events',
  help: 'Events parked by a projection (dead_letters) or a reactor (reactor_queue past its attempts)',
  labelNames: ['context', 'subscriber'],
  compute: async (c) =>
    (await parkedEvents(c.db, [c.schema], c.reactorMaxAttempts)).map((p) => ({
      labels: { context: c.context, subscriber: p.subscriber },
      value: p.parked,
    })),
});

const queueState = new WeakMap<
  MeteredContext,
  { at: number; rows: Promise<Array<{ reactor: string; depth: number; age: number }>> }
>();
function queueOf(context: MeteredContext) {
  const hit = queueState.get(context);
  if (hit && Date.now() - hit.at < SCRAPE_CACHE_MS) return hit.rows;
  const rows = context.db
    .query<{ reactor: string; depth: string; age: string | null }>(
      `SELECT reactor, count(*)::text AS depth, extract(epoch FROM now() - min(queued_at))::text AS age
         FROM ${context.schema}.reactor_queue
        WHERE done_at IS NULL AND attempts < $1 GROUP BY reactor`,
      [context.reactorMaxAttempts],
    )
    .then((found) => {
      const byName = new Map(found.map((r) => [r.reactor, r]));
      // Every reactor of the context, 0 when its queue is empty (a dashboard shows a flat line, not a gap).
      return context.reactorNames().map((reactor) => ({
        reactor,
        depth: Number(byName.get(reactor)?.depth ?? 0),
        age: Number(byName.get(reactor)?.age ?? 0),
      }));
    });
  queueState.set(context, { at: Date.now(), rows });
  return rows;
}

scrapeGauge({
  name: 'rigmarket_reactor_queue_depth',
  help: "Items waiting in a reactor's queue (not done, attempts left): its consumer lag",
  labelNames: ['context', 'reactor'],
  compute: async (c) =>
    (await queueOf(c)).map((q) => ({ labels: { context: c.context, reactor: q.reactor }, value: q.depth })),
});

scrapeGauge({
  name: 'rigmarket_reactor_queue_oldest_seconds',
  help: "Age of the oldest item waiting in a reactor's queue (0 when empty)",
  labelNames: ['context', 'reactor'],
  compute: async (c) =>
    (await queueOf(c)).map((q) => ({ labels: { context: c.context, reactor: q.reactor }, value: q.age })),
});
