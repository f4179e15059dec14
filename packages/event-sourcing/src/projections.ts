import {
  type ContextName,
  type DomainEvent,
  type EventEnvelope,
  InvalidEventError,
  assertValidEvent,
  topicFor,
  upcast,
} from '@rigmarket/contracts';
import type { Database, Sql } from './database';
import { deadLetterLogger, hasParkedEvent, parkEvent } from './dead-letters';
import { type EventSource, storeEventSource } from './event-source';
import type { DeliveryInfo, Subscription, Transport } from './transport';

export interface StreamSource {
  context: ContextName;
  streamType: string;
}

/**
 * A read model fed by events. `apply` sees every event of the sources' streams (it ignores types it
 * does not know: unknown types are skipped, not fatal) and writes with the given transaction. Write one
 * with `defineProjection`, which narrows each event to its type.
 */
export interface Projection {
  name: string;
  version: number;
  sources: readonly StreamSource[];
  /** Read-model tables (schema-qualified) emptied before a rebuild. */
  tables: readonly string[];
  /** The event types `apply` acts on; the others of its sources' streams only move its positions. */
  eventTypes: readonly string[];
  apply(sql: Sql, event: EventEnvelope): Promise<void>;
}

/**
 * The envelope of one member of an event union, `type` and `data` correlated: a `switch (event.type)` or a
 * handler keyed by type sees the data of that type (EventEnvelope<A | B> alone does not correlate them).
 */
export type EnvelopeOf<E extends DomainEvent> = E extends DomainEvent ? EventEnvelope<E> : never;

export interface ProjectionDefinition<E extends DomainEvent> {
  name: string;
  version: number;
  sources: readonly StreamSource[];
  /** Read-model tables (schema-qualified) emptied before a rebuild: the only tables `apply` writes or reads. */
  tables: readonly string[];
  /** The event types it applies; `apply` is not called for the others. */
  eventTypes: readonly E['type'][];
  /** Applies one event, narrowed once to the union `E` (a `switch (event.type)` then sees each payload). */
  apply(sql: Sql, event: EnvelopeOf<E>): Promise<void>;
}

/**
 * A projection of the events `E` (a union of the contracts' event types). The envelope is narrowed here,
 * once, by its `type`: events of other types are skipped before `apply`, and a subscribed projection's
 * inbound event has had its payload checked against the contracts' schema (`projectionSubscription`).
 */
export function defineProjection<E extends DomainEvent>(definition: ProjectionDefinition<E>): Projection {
  const types = new Set<string>(definition.eventTypes);
  return {
    name: definition.name,
    version: definition.version,
    sources: definition.sources,
    tables: definition.tables,
    eventTypes: [...types],
    async apply(sql, event) {
      if (types.has(event.type)) await definition.apply(sql, event as EnvelopeOf<E>);
    },
  };
}

export type ApplyOutcome = 'applied' | 'duplicate' | 'not-a-source';

/**
 * Why an inbound event must not be applied: its payload (upcast to the current version) does not match the
 * public schema of its type (packages/contracts event-schemas.ts). Only types the projection applies are
 * checked; undefined when it is fine. An event that cannot be upcast is left to the apply (and its retries).
 */
export function invalidInboundEvent(
  eventTypes: readonly string[],
  envelope: EventEnvelope,
): string | undefined {
  if (!eventTypes.includes(envelope.type)) return undefined;
  let current: EventEnvelope;
  try {
    current = upcast(envelope);
  } catch {
    return undefined;
  }
  try {
    assertValidEvent(current);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidEventError) return error.message;
    throw error;
  }
}

function isSource(projection: Projection, event: EventEnvelope): boolean {
  return projection.sources.some((s) => s.context === event.context && s.streamType === event.streamType);
}

/**
 * Applies one event idempotently in the caller's transaction: each stream's last applied position is
 * kept per projection, so a redelivered event (Kafka after a rebalance, a relay retry) changes nothing.
 */
export async function applyProjection(
  sql: Sql,
  schema: string,
  projection: Projection,
  raw: EventEnvelope,
  checkpoint?: { source: string; position: string },
): Promise<ApplyOutcome> {
  if (!isSource(projection, raw)) return 'not-a-source';
  // One round trip claims the position: the upsert moves it forward (and locks the row, serialising
  // concurrent appliers of the same stream) or changes nothing for an event already applied. If apply then
  // fails, the transaction rolls the position back with everything else.
  const claimed = await sql.query<{ position: number }>(
    `INSERT INTO ${schema}.projection_stream_positions AS p (projection, stream_id, position) VALUES ($1, $2, $3)
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position WHERE p.position < EXCLUDED.position
     RETURNING p.position`,
    [projection.name, raw.streamId, raw.streamPosition],
  );
  if (claimed.length === 0) return 'duplicate';
  await projection.apply(sql, upcast(raw));
  if (checkpoint) {
    await sql.execute(
      `INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`,
      [projection.name, projection.version, checkpoint.source, checkpoint.position],
    );
  }
  return 'applied';
}

async function saveStreamPositions(
  sql: Sql,
  schema: string,
  projection: string,
  positions: ReadonlyArray<[string, number]>,
): Promise<void> {
  if (positions.length === 0) return;
  await sql.execute(
    `INSERT INTO ${schema}.projection_stream_positions (projection, stream_id, position)
     SELECT $1, s.stream_id, s.position FROM unnest($2::text[], $3::int[]) AS s (stream_id, position)
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position`,
    [projection, positions.map((p) => p[0]), positions.map((p) => p[1])],
  );
}

/** How often a subscribed projection tries an event before parking it, and the waits between tries. */
export const PROJECTION_ATTEMPTS = 3;
export const projectionRetryDelayMs = (attempt: number): number => 100 * 4 ** (attempt - 1);

/**
 * Subscribes a projection of another context's events to the transport. An event whose payload does not
 * match its public schema is parked at once with the schema's complaint, never applied. An event the
 * projection cannot apply is logged at error with its id and tried again with a growing delay; after PROJECTION_ATTEMPTS it
 * is parked in `<schema>.dead_letters` (and so is every later event of its stream, to keep their order)
 * and the subscription goes on: nothing is dropped silently. `rigmarket retry` re-applies parked events.
 */
export function projectionSubscription(
  db: Database,
  schema: string,
  projection: Projection,
  groupPrefix: string,
  /** The subscribing context: its own sources are applied inline, not subscribed. */
  own?: ContextName,
): Subscription {
  const sources = projection.sources.filter((s) => s.context !== own);
  return {
    groupId: `${groupPrefix}.${projection.name}.v${projection.version}`,
    topics: [...new Set(sources.map((s) => topicFor(s.context, s.streamType)))],
    handle: async (envelope: EventEnvelope, delivery: DeliveryInfo) => {
      if (!isSource(projection, envelope) || envelope.context === own) return;
      const invalid = invalidInboundEvent(projection.eventTypes, envelope);
      if (invalid !== undefined) {
        // Retrying cannot make it valid: parked at once (later events of its stream park behind it).
        await db.transaction((sql) => parkEvent(sql, schema, projection.name, envelope, invalid, 1));
        deadLetterLogger.error(`${schema}/${projection.name}: ${invalid}; parked in ${schema}.dead_letters`);
        return;
      }
      for (let attempt = 1; ; attempt += 1) {
        try {
          const parkedBehind = await db.transaction(async (sql) => {
            if (await hasParkedEvent(sql, schema, projection.name, envelope.streamId)) {
              await parkEvent(
                sql,
                schema,
                projection.name,
                envelope,
                'behind a parked event of its stream',
                0,
              );
              return true;
            }
            await applyProjection(sql, schema, projection, envelope, {
              source: `${delivery.topic}:${delivery.partition}`,
              position: delivery.offset,
            });
            return false;
          });
          if (parkedBehind)
            deadLetterLogger.error(
              `${schema}/${projection.name}: event ${envelope.eventId} (${envelope.type}, ${envelope.streamId}@${envelope.streamPosition}) parked behind an earlier parked event of its stream`,
            );
          return;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          deadLetterLogger.error(
            `${schema}/${projection.name} failed on event ${envelope.eventId} (${envelope.type}, ${envelope.streamId}@${envelope.streamPosition}), attempt ${attempt} of ${PROJECTION_ATTEMPTS}: ${message}`,
          );
          if (attempt >= PROJECTION_ATTEMPTS) {
            // If parking fails too (database away), the rejection makes the transport deliver it again.
            await db.transaction((sql) =>
              parkEvent(sql, schema, projection.name, envelope, message, attempt),
            );
            deadLetterLogger.error(
              `${schema}/${projection.name}: event ${envelope.eventId} parked in ${schema}.dead_letters`,
            );
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, projectionRetryDelayMs(attempt)));
        }
      }
    },
  };
}

/**
 * `rigmarket retry`: re-applies a context's parked events, stream by stream in stream order, each in its
 * own transaction that also removes it from dead_letters. A stream stops at its first event that fails
 * again (its error updated); the other streams go on. Answers how many were applied and how many remain.
 */
export async function retryParkedEvents(
  db: Database,
  schema: string,
  projections: readonly Projection[],
): Promise<{ applied: number; remaining: number }> {
  let applied = 0;
  let remaining = 0;
  for (const projection of projections) {
    const rows = await db.query<{ id: string; stream_id: string; envelope: EventEnvelope | string }>(
      `SELECT id::text AS id, stream_id, envelope FROM ${schema}.dead_letters WHERE subscriber = $1
        ORDER BY stream_id, stream_position`,
      [projection.name],
    );
    const stuck = new Set<string>();
    for (const row of rows) {
      if (stuck.has(row.stream_id)) {
        remaining += 1;
        continue;
      }
      const envelope =
        typeof row.envelope === 'string' ? (JSON.parse(row.envelope) as EventEnvelope) : row.envelope;
      try {
        await db.transaction(async (sql) => {
          const invalid = invalidInboundEvent(projection.eventTypes, envelope);
          if (invalid !== undefined) throw new Error(invalid);
          await applyProjection(sql, schema, projection, envelope);
          await sql.execute(`DELETE FROM ${schema}.dead_letters WHERE id = $1`, [row.id]);
        });
        applied += 1;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        deadLetterLogger.error(
          `${schema}/${projection.name}: retry of event ${envelope.eventId} failed again: ${message}`,
        );
        await db.execute(
          `UPDATE ${schema}.dead_letters SET error = $2, attempts = attempts + 1 WHERE id = $1`,
          [row.id, message.slice(0, 2000)],
        );
        stuck.add(row.stream_id);
        remaining += 1;
      }
    }
  }
  return { applied, remaining };
}

export async function subscribeProjections(
  transport: Transport,
  db: Database,
  schema: string,
  projections: readonly Projection[],
  groupPrefix: string,
  own?: ContextName,
): Promise<void> {
  for (const projection of projections) {
    await transport.subscribe(projectionSubscription(db, schema, projection, groupPrefix, own));
  }
}

/**
 * Drops a projection's rows and replays it from the events of its sources, in one transaction: readers
 * see the old table until the rebuilt one commits. The events come through `source` (default: the owning
 * contexts' stores in this database). Returns the events applied.
 */
export async function rebuildProjection(
  db: Database,
  schema: string,
  projection: Projection,
  source?: (sql: Sql) => EventSource,
): Promise<number> {
  return db.transaction((sql) => replayProjection(sql, schema, projection, source?.(sql)));
}

/**
 * rebuildProjection's work in the caller's transaction (a migration that changes a read model's shape
 * replays it this way): empties the projection's tables and positions, applies every source event.
 */
export async function replayProjection(
  sql: Sql,
  schema: string,
  projection: Projection,
  source: EventSource = storeEventSource(sql),
): Promise<number> {
  for (const table of projection.tables) await sql.execute(`DELETE FROM ${table}`);
  await sql.execute(`DELETE FROM ${schema}.projection_stream_positions WHERE projection = $1`, [
    projection.name,
  ]);
  await sql.execute(`DELETE FROM ${schema}.projection_checkpoints WHERE projection = $1`, [projection.name]);
  let applied = 0;
  const contexts = [...new Set(projection.sources.map((s) => s.context))];
  // The positions were just deleted, so they are kept here and written once per batch (one multi-row
  // upsert) instead of a SELECT ... FOR UPDATE and an upsert around every event.
  const positions = new Map<string, number>();
  for (const context of contexts) {
    const streamTypes = projection.sources.filter((s) => s.context === context).map((s) => s.streamType);
    const reached = await source.replay(context, streamTypes, async (batch) => {
      const touched = new Set<string>();
      for (const event of batch) {
        if (!isSource(projection, event) || event.streamPosition <= (positions.get(event.streamId) ?? 0))
          continue;
        await projection.apply(sql, upcast(event));
        positions.set(event.streamId, event.streamPosition);
        touched.add(event.streamId);
        applied += 1;
      }
      await saveStreamPositions(
        sql,
        schema,
        projection.name,
        [...touched].map((id) => [id, positions.get(id)!]),
      );
    });
    await sql.execute(
      `INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position) VALUES ($1, $2, $3, $4)`,
      [projection.name, projection.version, reached.source, reached.position],
    );
  }
  return applied;
}
