import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import type { Database } from './database';
import type { Projection } from './projections';

export interface ProjectionLag {
  /** Source events (in this database) past the projection's applied position of their stream. */
  events: number;
  /** How long the oldest of them has been stored, in milliseconds (0 when none). */
  oldestMs: number;
}

async function tablePresent(db: Database, table: string): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  return row?.found === true;
}

/**
 * How far a projection of the context stored in `schema` is behind its sources, counted against the
 * source contexts' event tables in the same database; undefined where those tables are elsewhere. With
 * `subscribedOnly`, only the sources it receives through the transport (other contexts') count.
 */
export async function projectionLag(
  db: Database,
  schema: string,
  projection: Projection,
  options: { subscribedOnly?: boolean } = {},
): Promise<ProjectionLag | undefined> {
  if (!(await tablePresent(db, `${schema}.projection_stream_positions`))) return undefined;
  const lag: ProjectionLag = { events: 0, oldestMs: 0 };
  // A projection listed both inline and subscribed (auth_api_keys, audit_log) applies its own context's
  // events in their command's transaction: only the other contexts' can be behind a subscription.
  const contexts = [...new Set(projection.sources.map((s) => s.context))].filter(
    (context) => !options.subscribedOnly || CONTEXT_SCHEMAS[context] !== schema,
  );
  for (const context of contexts) {
    const source = CONTEXT_SCHEMAS[context];
    if (!(await tablePresent(db, `${source}.events`))) return undefined;
    const [row] = await db.query<{ events: string; oldest_ms: string | null }>(
      `SELECT count(*)::text AS events,
              (extract(epoch FROM now() - min(e.recorded_at)) * 1000)::bigint::text AS oldest_ms
         FROM ${source}.events e
         LEFT JOIN ${schema}.projection_stream_positions p ON p.projection = $1 AND p.stream_id = e.stream_id
        WHERE e.stream_type = ANY($2::text[]) AND e.stream_position > COALESCE(p.position, 0)`,
      [projection.name, projection.sources.filter((s) => s.context === context).map((s) => s.streamType)],
    );
    lag.events += Number(row?.events ?? 0);
    lag.oldestMs = Math.max(lag.oldestMs, Number(row?.oldest_ms ?? 0));
  }
  return lag;
}
