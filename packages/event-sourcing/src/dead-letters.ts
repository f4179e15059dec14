import { Logger } from '@nestjs/common';
import { CONTEXT_SCHEMAS, type EventEnvelope } from '@rigmarket/contracts';
import type { Database, Sql } from './database';
import type { Migration } from './migrations';
import { LAG_SCAN_NEWEST, projectionLag } from './projection-lag';
import type { Projection } from './projections';

/**
 * Events a subscribed projection could not apply after its retries, parked per context in
 * `<schema>.dead_letters` instead of dropped (docs/operations.md, Parked events). A stream with a parked
 * event parks its later events too, so that `rigmarket retry` re-applies them in stream order.
 */
export const deadLettersMigration: Migration = {
  id: 'core-0002-dead-letters',
  replaces: '0001-dead-letters',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.dead_letters (
        id BIGSERIAL PRIMARY KEY,
        subscriber TEXT NOT NULL,
        event_id TEXT NOT NULL,
        stream_id TEXT NOT NULL,
        stream_position INTEGER NOT NULL,
        envelope JSONB NOT NULL,
        error TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        parked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (subscriber, event_id)
      )`);
    await sql.execute(
      `CREATE INDEX ${s}_dead_letters_by_stream ON ${s}.dead_letters (subscriber, stream_id)`,
    );
  },
};

export const deadLetterLogger = new Logger('DeadLetters');

export async function hasParkedEvent(
  sql: Sql,
  schema: string,
  subscriber: string,
  streamId: string,
): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM ${schema}.dead_letters WHERE subscriber = $1 AND stream_id = $2 LIMIT 1`,
    [subscriber, streamId],
  );
  return rows.length > 0;
}

export async function parkEvent(
  sql: Sql,
  schema: string,
  subscriber: string,
  envelope: EventEnvelope,
  error: string,
  attempts: number,
): Promise<void> {
  await sql.execute(
    `INSERT INTO ${schema}.dead_letters (subscriber, event_id, stream_id, stream_position, envelope, error, attempts)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (subscriber, event_id) DO UPDATE SET error = EXCLUDED.error, attempts = EXCLUDED.attempts`,
    [
      subscriber,
      envelope.eventId,
      envelope.streamId,
      envelope.streamPosition,
      JSON.stringify(envelope),
      error.slice(0, 2000),
      attempts,
    ],
  );
}

export interface ParkedSummary {
  schema: string;
  /** A projection name, or `reactor:<name>` for a reactor_queue item past its attempts. */
  subscriber: string;
  parked: number;
  lastError: string;
}

async function tablePresent(sql: Sql, table: string): Promise<boolean> {
  const [row] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  return row?.found === true;
}

/**
 * Parked events per subscriber in the given schemas (every context's by default): projections' dead letters
 * and reactor items that used up their attempts (still in reactor_queue, `attempts >= maxAttempts`).
 */
export async function parkedEvents(
  sql: Sql,
  schemas: readonly string[] = Object.values(CONTEXT_SCHEMAS),
  reactorMaxAttempts = 10,
): Promise<ParkedSummary[]> {
  const found: ParkedSummary[] = [];
  for (const schema of schemas) {
    if (await tablePresent(sql, `${schema}.dead_letters`)) {
      const rows = await sql.query<{ subscriber: string; parked: string; last_error: string }>(
        `SELECT subscriber, count(*)::text AS parked,
                (array_agg(error ORDER BY id DESC))[1] AS last_error
           FROM ${schema}.dead_letters GROUP BY subscriber ORDER BY subscriber`,
      );
      for (const r of rows)
        found.push({ schema, subscriber: r.subscriber, parked: Number(r.parked), lastError: r.last_error });
    }
    if (await tablePresent(sql, `${schema}.reactor_queue`)) {
      const rows = await sql.query<{ reactor: string; parked: string; last_error: string | null }>(
        `SELECT reactor, count(*)::text AS parked, (array_agg(last_error ORDER BY queued_at DESC))[1] AS last_error
           FROM ${schema}.reactor_queue WHERE done_at IS NULL AND attempts >= $1 GROUP BY reactor ORDER BY reactor`,
        [reactorMaxAttempts],
      );
      for (const r of rows)
        found.push({
          schema,
          subscriber: `reactor:${r.reactor}`,
          parked: Number(r.parked),
          lastError: r.last_error ?? '',
        });
    }
  }
  return found;
}

/** How far behind `/readyz` lets a relay or a subscribed projection fall before the app is not ready. */
export const DEFAULT_MAX_FLOW_LAG_MS = 60_000;

/**
 * Why a context is not ready, or undefined: an event parked by one of its projections or reactors, its
 * outbox relay more than `maxLagMs` behind (the oldest unpublished event), or one of its subscribed
 * projections with a source event stored more than `maxLagMs` ago and not applied yet, or LAG_SCAN_NEWEST
 * or more not applied (only the newest LAG_SCAN_NEWEST of each source type are examined, so a probe costs
 * the same at any size of the store). For `/readyz`.
 */
export async function eventFlowProblem(
  db: Database,
  schemas: readonly string[] = Object.values(CONTEXT_SCHEMAS),
  maxLagMs = DEFAULT_MAX_FLOW_LAG_MS,
  subscribed: ReadonlyArray<{ schema: string; projections: readonly Projection[] }> = [],
): Promise<string | undefined> {
  const parked = await parkedEvents(db, schemas);
  if (parked.length > 0)
    return parked
      .map((p) => `${p.schema}/${p.subscriber} has ${p.parked} parked event(s) (last error: ${p.lastError})`)
      .join('; ');
  for (const schema of schemas) {
    if (!(await tablePresent(db, `${schema}.outbox`))) continue;
    const [row] = await db.query<{ lag_ms: string | null }>(
      `SELECT (extract(epoch FROM now() - min(e.recorded_at)) * 1000)::bigint::text AS lag_ms
         FROM ${schema}.outbox o JOIN ${schema}.events e ON e.global_position = o.global_position
        WHERE o.published_at IS NULL`,
    );
    const lag = Number(row?.lag_ms ?? 0);
    if (lag > maxLagMs)
      return `${schema}: events not yet delivered to other contexts for ${Math.round(lag / 1000)} s`;
  }
  for (const { schema, projections } of subscribed) {
    for (const projection of projections) {
      const lag = await projectionLag(db, schema, projection, {
        subscribedOnly: true,
        newest: LAG_SCAN_NEWEST,
      });
      if (lag?.atLeast)
        return `${schema}/${projection.name} is at least ${lag.events} event(s) behind, the oldest examined stored ${Math.round(lag.oldestMs / 1000)} s ago`;
      if (lag && lag.oldestMs > maxLagMs)
        return `${schema}/${projection.name} is ${lag.events} event(s) behind, the oldest stored ${Math.round(lag.oldestMs / 1000)} s ago`;
    }
  }
  return undefined;
}
