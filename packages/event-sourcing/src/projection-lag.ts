import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import type { Database } from './database';
import type { Projection } from './projections';

export interface ProjectionLag {
  /** Source events (in this database) past the projection's applied position of their stream. */
  events: number;
  /** How long the oldest of them has been stored, in milliseconds (0 when none). */
  oldestMs: number;
  /**
   * Only with `newest`: `newest` or more unapplied events were found, so the projection may be further behind
   * than counted (older events were not examined) and its oldest unapplied event older than `oldestMs`.
   */
  atLeast: boolean;
}

/**
 * How many of a projection's newest source events (of each source stream type) `/metrics` and `/readyz`
 * examine. Counting over every source event took ~0.5 s on PostgreSQL and ~1.5 s on PGlite per projection
 * at a million events, on every scrape and readiness probe; the newest 1,000 take ~10 ms on PGlite at any
 * size. A healthy subscribed projection is a delivery or two behind.
 */
export const LAG_SCAN_NEWEST = 1_000;

async function tablePresent(db: Database, table: string): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  return row?.found === true;
}

/**
 * How far a projection of the context stored in `schema` is behind its sources, counted against the
 * source contexts' event tables in the same database; undefined where those tables are elsewhere. With
 * `subscribedOnly`, only the sources it receives through the transport (other contexts') count. With
 * `newest`, only that many of the newest source events of each source stream type are examined (read
 * backwards on the type's index), so the cost does not grow with the store; `atLeast` then says when the
 * count reached `newest`.
 */
export async function projectionLag(
  db: Database,
  schema: string,
  projection: Projection,
  options: { subscribedOnly?: boolean; newest?: number } = {},
): Promise<ProjectionLag | undefined> {
  if (!(await tablePresent(db, `${schema}.projection_stream_positions`))) return undefined;
  const lag: ProjectionLag = { events: 0, oldestMs: 0, atLeast: false };
  // A projection listed both inline and subscribed (auth_api_keys, audit_log) applies its own context's
  // events in their command's transaction: only the other contexts' can be behind a subscription.
  const contexts = [...new Set(projection.sources.map((s) => s.context))].filter(
    (context) => !options.subscribedOnly || CONTEXT_SCHEMAS[context] !== schema,
  );
  for (const context of contexts) {
    const source = CONTEXT_SCHEMAS[context];
    if (!(await tablePresent(db, `${source}.events`))) return undefined;
    const streamTypes = projection.sources.filter((s) => s.context === context).map((s) => s.streamType);
    const newest = options.newest;
    const lagged = `SELECT count(*)::text AS events,
              (extract(epoch FROM now() - min(e.recorded_at)) * 1000)::bigint::text AS oldest_ms`;
    const [row] = await db.query<{ events: string; oldest_ms: string | null }>(
      newest === undefined
        ? // Every source event of these types, against the positions in one join.
          `${lagged}
             FROM ${source}.events e
             LEFT JOIN ${schema}.projection_stream_positions p ON p.projection = $1 AND p.stream_id = e.stream_id
            WHERE e.stream_type = ANY($2::text[]) AND e.stream_position > COALESCE(p.position, 0)`
        : // The newest `newest` of each type: a backward scan of the (stream_type, global_position) index from
          // the type's last event (the row comparison and the ordering keep the planner on that index, where
          // `stream_type = t` ordered by global_position walked the whole primary key for a type with few
          // events), then each one's applied position looked up on its key.
          `${lagged}
             FROM unnest($2::text[]) AS t(stream_type)
            CROSS JOIN LATERAL (
              SELECT stream_type, stream_id, stream_position, recorded_at FROM ${source}.events
               WHERE (stream_type, global_position) <= (t.stream_type, 9223372036854775807)
               ORDER BY stream_type DESC, global_position DESC LIMIT $3) e
            WHERE e.stream_type = t.stream_type
              AND e.stream_position > COALESCE(
                    (SELECT p.position FROM ${schema}.projection_stream_positions p
                      WHERE p.projection = $1 AND p.stream_id = e.stream_id), 0)`,
      newest === undefined ? [projection.name, streamTypes] : [projection.name, streamTypes, newest],
    );
    const events = Number(row?.events ?? 0);
    lag.events += events;
    lag.oldestMs = Math.max(lag.oldestMs, Number(row?.oldest_ms ?? 0));
    if (newest !== undefined && events >= newest) lag.atLeast = true;
  }
  return lag;
}
