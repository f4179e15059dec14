import { createHash } from 'node:crypto';
import {
  CONTEXT_SCHEMAS,
  type ContextName,
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  InvalidEventError,
  assertValidEvent,
  streamTypeOf,
  topicFor,
  upcast,
} from '@rigmarket/contracts';
import type { Database, Sql } from './database';
import { deadLetterLogger, hasParkedEvent, parkEvent } from './dead-letters';
import { type EventSource, contextEventSource, storeEventSource } from './event-source';
import { EventStore, type ProjectionPosition, type StreamAppend } from './event-store';
import { contextOfSchema, projectionEventsHandled } from './metrics';
import { readModelsChanged } from './read-model-signals';
import { consumeSpans } from './tracing';
import type { Delivery, DeliveryInfo, Subscription, Transport } from './transport';

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
  /**
   * Optional: applies several events at once (upcast, in global order, each stream's in stream order, none
   * applied before) with a few multi-row statements. It must leave exactly the rows that `apply` on each
   * event in turn leaves; without it the batch is applied event by event.
   */
  applyBatch?(sql: Sql, events: readonly EventEnvelope[]): Promise<void>;
  /**
   * Optional: the tables whose watchers (read-model-signals.ts) must hear that these events were applied;
   * without it, all of `tables`. A projection names fewer when a change cannot contradict any cached answer
   * (e.g. rows only added to a table whose cache keeps rows found, never rows missing). Rebuilds and
   * replays always signal all of `tables`.
   */
  signals?(events: readonly EventEnvelope[]): readonly string[];
}

/** Tells the watchers of a projection's tables that `events` were applied in the transaction of `sql`. */
function signalApplied(sql: Sql, projection: Projection, events: readonly EventEnvelope[]): void {
  readModelsChanged(sql, projection.signals?.(events) ?? projection.tables);
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
  /**
   * Optional: the events of its types in a batch (global order), applied with a few multi-row statements
   * instead of `apply` per event. Must leave the same rows as `apply` on each in turn (the projection spec
   * helper checks both ways).
   */
  applyBatch?(sql: Sql, events: readonly EnvelopeOf<E>[]): Promise<void>;
  /** Optional: the tables to signal for these events (Projection.signals); all of `tables` without it. */
  signals?(events: readonly EventEnvelope[]): readonly string[];
}

/**
 * A projection of the events `E` (a union of the contracts' event types). The envelope is narrowed here,
 * once, by its `type`: events of other types are skipped before `apply`, and a subscribed projection's
 * inbound event has had its payload checked against the contracts' schema (`projectionSubscription`).
 */
export function defineProjection<E extends DomainEvent>(definition: ProjectionDefinition<E>): Projection {
  const types = new Set<string>(definition.eventTypes);
  const batch = definition.applyBatch;
  return {
    name: definition.name,
    version: definition.version,
    sources: definition.sources,
    tables: definition.tables,
    eventTypes: [...types],
    ...(definition.signals && { signals: definition.signals }),
    async apply(sql, event) {
      if (types.has(event.type)) await definition.apply(sql, event as EnvelopeOf<E>);
    },
    ...(batch && {
      async applyBatch(sql: Sql, events: readonly EventEnvelope[]) {
        const own = events.filter((e) => types.has(e.type)) as EnvelopeOf<E>[];
        if (own.length > 0) await batch(sql, own);
      },
    }),
  };
}

/**
 * An `applyBatch` for a projection whose event of type `type` adds one row: each run of consecutive such
 * events in a batch is one INSERT (`insertUnnested`, rows from `row`, none where it gives undefined; `tail`
 * its ON CONFLICT clause), every other event is applied by `apply`, in order. Leaves the rows `apply` on each
 * in turn leaves when `apply` of such an event inserts that row with the same clause.
 */
export function insertsInRuns<E extends DomainEvent, T extends E['type']>(options: {
  type: T;
  table: string;
  columns: readonly (readonly [name: string, type: string])[];
  row: (event: EnvelopeOf<Extract<E, { type: T }>>) => readonly unknown[] | undefined;
  tail: string;
  apply: (sql: Sql, event: EnvelopeOf<E>) => Promise<void>;
}): (sql: Sql, events: readonly EnvelopeOf<E>[]) => Promise<void> {
  return async (sql, events) => {
    let run: unknown[][] = [];
    const flush = async () => {
      await insertUnnested(sql, options.table, options.columns, run, options.tail);
      run = [];
    };
    for (const event of events) {
      if (event.type === options.type) {
        const row = options.row(event as EnvelopeOf<Extract<E, { type: T }>>);
        if (row) run.push([...row]);
        continue;
      }
      await flush();
      await options.apply(sql, event);
    }
    await flush();
  };
}

/**
 * One INSERT of many rows (`columns`: name and PostgreSQL type, `rows`: one array of values each, in
 * order), from `unnest` of one array per column, so the statement's text is the same whatever the count;
 * `tail` is what follows (an ON CONFLICT clause).
 */
export async function insertUnnested(
  sql: Sql,
  table: string,
  columns: readonly (readonly [name: string, type: string])[],
  rows: readonly (readonly unknown[])[],
  tail = '',
): Promise<void> {
  if (rows.length === 0) return;
  const names = columns.map(([name]) => name).join(', ');
  const arrays = columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  await sql.execute(
    `INSERT INTO ${table} (${names})
     SELECT ${names} FROM unnest(${arrays}) WITH ORDINALITY AS r (${names}, n) ORDER BY r.n ${tail}`,
    columns.map((_, i) => rows.map((row) => row[i])),
  );
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
  const event = upcast(raw);
  await projection.apply(sql, event);
  signalApplied(sql, projection, [event]);
  if (checkpoint) await saveCheckpoint(sql, schema, projection, checkpoint);
  return 'applied';
}

/**
 * Upcasts and applies events that are all to be applied (none a duplicate), with the projection's
 * `applyBatch` when it has one, else one `apply` per event.
 */
async function applyFresh(sql: Sql, projection: Projection, events: readonly EventEnvelope[]): Promise<void> {
  if (events.length === 0) return;
  const current = events.map((e) => upcast(e));
  if (projection.applyBatch) {
    await projection.applyBatch(sql, current);
    return;
  }
  for (const event of current) await projection.apply(sql, event);
}

export interface BatchOutcome {
  applied: number;
  duplicates: number;
  /** With `unlessParked`: a stream of the batch has a parked event for the projection; nothing was written. */
  parked?: true;
}

/**
 * applyProjection for several events (in global order) in the caller's transaction, with a fixed number of
 * statements besides the projection's own: one claims (locks and reads) the positions of every stream in
 * the batch, then the events past them are applied (`applyBatch` when the projection has it), then one
 * multi-row upsert moves the positions and one writes the checkpoint. A redelivered event changes
 * nothing, as with applyProjection; if anything fails the transaction rolls back the whole batch (a
 * subscription then falls back to one event at a time to find and park the bad one).
 */
export async function applyProjectionBatch(
  sql: Sql,
  schema: string,
  projection: Projection,
  raws: readonly EventEnvelope[],
  /** Where the batch ends in each source it came from (a topic partition: its last offset). */
  checkpoints: ReadonlyArray<{ source: string; position: string }> = [],
  /** Apply nothing if a stream of the batch has a parked event (checked by the claiming statement). */
  options: { unlessParked?: boolean } = {},
): Promise<BatchOutcome> {
  const events = raws.filter((e) => isSource(projection, e));
  if (events.length === 0) return { applied: 0, duplicates: 0 };
  if (events.length === 1) {
    if (options.unlessParked && (await hasParkedEvent(sql, schema, projection.name, events[0]!.streamId)))
      return { applied: 0, duplicates: 0, parked: true };
    const outcome = await applyProjection(sql, schema, projection, events[0]!, checkpoints[0]);
    for (const checkpoint of outcome === 'applied' ? checkpoints.slice(1) : [])
      await saveCheckpoint(sql, schema, projection, checkpoint);
    return outcome === 'applied' ? { applied: 1, duplicates: 0 } : { applied: 0, duplicates: 1 };
  }
  // Sorted stream ids: two appliers of overlapping batches lock their rows in the same order. The no-op
  // update locks an existing row and returns its position; a new stream gets a row at 0.
  const streamIds = [...new Set(events.map((e) => e.streamId))].sort();
  // With `unlessParked` the same statement looks for a parked event first and then claims nothing: every
  // stream gets a row otherwise, so no row back means parked.
  const claimed = await sql.query<{ stream_id: string; position: number }>(
    `WITH parked AS (
       SELECT $3::boolean AND EXISTS (
         SELECT 1 FROM ${schema}.dead_letters WHERE subscriber = $1::text AND stream_id = ANY($2::text[])
       ) AS parked
     )
     INSERT INTO ${schema}.projection_stream_positions AS p (projection, stream_id, position)
     SELECT $1::text, s.stream_id, 0 FROM unnest($2::text[]) WITH ORDINALITY AS s (stream_id, n), parked
      WHERE NOT parked.parked
      ORDER BY s.n
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = p.position
     RETURNING p.stream_id, p.position`,
    [projection.name, streamIds, options.unlessParked === true],
  );
  if (claimed.length === 0) return { applied: 0, duplicates: 0, parked: true };
  const positions = new Map(claimed.map((r) => [r.stream_id, Number(r.position)]));
  const fresh: EventEnvelope[] = [];
  const touched = new Set<string>();
  for (const event of events) {
    if (event.streamPosition <= (positions.get(event.streamId) ?? 0)) continue;
    positions.set(event.streamId, event.streamPosition);
    touched.add(event.streamId);
    fresh.push(event);
  }
  if (fresh.length === 0) return { applied: 0, duplicates: events.length };
  await applyFresh(sql, projection, fresh);
  signalApplied(sql, projection, fresh);
  await saveStreamPositions(
    sql,
    schema,
    projection.name,
    [...touched].map((id) => [id, positions.get(id)!]),
    checkpoints.length > 0 ? { version: projection.version, checkpoints } : undefined,
  );
  return { applied: fresh.length, duplicates: events.length - fresh.length };
}

/**
 * A context's own (inline) projections applied to the events a command has just appended, in the command's
 * transaction. Events appended in this transaction cannot have been applied before, so nothing is claimed:
 * one multi-row upsert moves every projection's stream positions first (writers take the positions before
 * they touch a read model, in the order a rebuild's swap locks them: see rebuildInChunks), then each
 * projection applies its events (`applyBatch` when it has one). One statement besides the projections' own,
 * whatever the number of projections and events.
 */
export async function applyInlineProjections(
  sql: Sql,
  schema: string,
  projections: readonly Projection[],
  appended: readonly EventEnvelope[],
  options: { positionsMoved?: boolean } = {},
): Promise<void> {
  const positions: ProjectionPosition[] = [];
  const work: Array<[Projection, EventEnvelope[]]> = [];
  for (const projection of projections) {
    const events = appended.filter((e) => isSource(projection, e));
    if (events.length === 0) continue;
    work.push([projection, events]);
    const last = new Map<string, number>();
    for (const e of events) last.set(e.streamId, Math.max(last.get(e.streamId) ?? 0, e.streamPosition));
    for (const [streamId, position] of last)
      positions.push({ projection: projection.name, streamId, position });
  }
  if (positions.length === 0) return;
  if (!options.positionsMoved) await movePositions(sql, schema, positions);
  for (const [projection, events] of work) {
    await applyFresh(sql, projection, events);
    signalApplied(sql, projection, events);
  }
}

/**
 * Sorted, so two transactions that touch the same rows lock them in the same order. By UTF-16 code units, not
 * localeCompare: any one order serves, and a locale's collation loads ICU's collation data into the process
 * (~2 MB resident, docs/benchmarks.md "Embedded memory under load").
 */
function sortPositions(positions: ProjectionPosition[]): ProjectionPosition[] {
  return positions.sort((a, b) =>
    a.projection === b.projection
      ? compareCodeUnits(a.streamId, b.streamId)
      : compareCodeUnits(a.projection, b.projection),
  );
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Appends a command's events to one stream (and `alongside`, other streams' events in the same statement:
 * EventStore.appendStreams) and applies the context's inline projections to them
 * (applyInlineProjections), the projections' positions written by the append's own statement: one round
 * trip fewer per command. Returns every envelope, the command's stream's first.
 */
export async function appendAndProject(
  sql: Sql,
  store: EventStore,
  projections: readonly Projection[],
  append: StreamAppend & { metadata: EventMetadata; occurredAt: Date },
  alongside: readonly StreamAppend[] = [],
): Promise<EventEnvelope[]> {
  const parts = [append, ...alongside].filter((a) => a.events.length > 0);
  // Every event of one stream has the same source: a projection takes all of a stream's events or none.
  const projectionPositions = sortPositions(
    parts.flatMap(({ streamId, expectedVersion, events }) => {
      const streamType = streamTypeOf(streamId);
      return projections
        .filter((p) => p.sources.some((s) => s.context === store.context && s.streamType === streamType))
        .map((p) => ({ projection: p.name, streamId, position: expectedVersion + events.length }));
    }),
  );
  const envelopes = await store.appendStreams(sql, parts, append.metadata, append.occurredAt, {
    projectionPositions,
  });
  await applyInlineProjections(sql, store.schema, projections, envelopes, { positionsMoved: true });
  return envelopes;
}

async function movePositions(sql: Sql, schema: string, positions: ProjectionPosition[]): Promise<void> {
  sortPositions(positions);
  await sql.execute(
    `INSERT INTO ${schema}.projection_stream_positions (projection, stream_id, position)
     SELECT s.projection, s.stream_id, s.position
       FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS s (projection, stream_id, position, n)
      ORDER BY s.n
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position`,
    [positions.map((p) => p.projection), positions.map((p) => p.streamId), positions.map((p) => p.position)],
  );
}

async function saveCheckpoint(
  sql: Sql,
  schema: string,
  projection: Projection,
  checkpoint: { source: string; position: string },
): Promise<void> {
  await sql.execute(
    `INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`,
    [projection.name, projection.version, checkpoint.source, checkpoint.position],
  );
}

/**
 * Moves a projection's stream positions; with `also`, writes its checkpoints (sources in the order given) in
 * the same statement.
 */
async function saveStreamPositions(
  sql: Sql,
  schema: string,
  projection: string,
  positions: ReadonlyArray<[string, number]>,
  also?: { version: number; checkpoints: ReadonlyArray<{ source: string; position: string }> },
): Promise<void> {
  if (positions.length === 0) return;
  const upsert = `INSERT INTO ${schema}.projection_stream_positions (projection, stream_id, position)
     SELECT $1, s.stream_id, s.position FROM unnest($2::text[], $3::int[]) AS s (stream_id, position)
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position`;
  const params: unknown[] = [projection, positions.map((p) => p[0]), positions.map((p) => p[1])];
  if (!also) {
    await sql.execute(upsert, params);
    return;
  }
  // One round trip for both (a delivered batch's bookkeeping); each source once, at its last position.
  const checkpoints = [...new Map(also.checkpoints.map((c) => [c.source, c.position]))];
  await sql.execute(
    `WITH checkpoints AS (
       INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
       SELECT $1, $4, c.source, c.position, now()
         FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS c (source, position, n) ORDER BY c.n
       ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now())
     ${upsert}`,
    [
      ...params,
      also.version,
      checkpoints.map(([source]) => source),
      checkpoints.map(([, position]) => position),
    ],
  );
}

/**
 * A delivered event's bookkeeping in one statement (the subscription's path for one event): unless its stream
 * has a parked event for the projection, claims its position (as applyProjection does) and, if claimed, writes
 * the delivery's checkpoint. 'claimed': the caller applies it (in the same transaction); 'duplicate': already
 * applied; 'parked': nothing written, the caller parks it behind.
 */
async function claimDelivered(
  sql: Sql,
  schema: string,
  projection: Projection,
  envelope: EventEnvelope,
  checkpoint: { source: string; position: string },
): Promise<'claimed' | 'duplicate' | 'parked'> {
  const [row] = await sql.query<{ parked: boolean; claimed: boolean }>(
    `WITH parked AS (
       SELECT EXISTS (SELECT 1 FROM ${schema}.dead_letters WHERE subscriber = $1::text AND stream_id = $2::text) AS parked
     ), claimed AS (
       INSERT INTO ${schema}.projection_stream_positions AS p (projection, stream_id, position)
       SELECT $1::text, $2::text, $3::int FROM parked WHERE NOT parked.parked
       ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position WHERE p.position < EXCLUDED.position
       RETURNING p.position
     ), checkpoint AS (
       INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
       SELECT $1::text, $4::int, $5::text, $6::text, now() FROM claimed
       ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now()
     )
     SELECT parked.parked, EXISTS (SELECT 1 FROM claimed) AS claimed FROM parked`,
    [
      projection.name,
      envelope.streamId,
      envelope.streamPosition,
      projection.version,
      checkpoint.source,
      checkpoint.position,
    ],
  );
  return row?.parked ? 'parked' : row?.claimed ? 'claimed' : 'duplicate';
}

/**
 * Delivered events of types the projection does not apply, in one statement (`passOverShares` for one
 * projection). False when a stream has a parked event (nothing written) or the statement failed: the caller
 * takes its usual path then.
 */
async function passOver(
  db: Database,
  schema: string,
  projection: Projection,
  deliveries: readonly Delivery[],
): Promise<boolean> {
  const parked = await passOverShares(db, schema, [[projection, deliveries]]);
  return parked !== undefined && !parked.has(projection.name);
}

/** The consumer group of a projection subscribed alone (over Kafka before one group per context). */
function projectionGroupId(groupPrefix: string, projection: Projection): string {
  return `${groupPrefix}.${projection.name}.v${projection.version}`;
}

/** The topics of a projection's sources in other contexts than `own` (its own are applied inline). */
function subscribedTopics(projection: Projection, own?: ContextName): string[] {
  return [
    ...new Set(
      projection.sources.filter((s) => s.context !== own).map((s) => topicFor(s.context, s.streamType)),
    ),
  ];
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
  const metricLabels = { context: contextOfSchema(schema), projection: projection.name };
  const spanName = `${schema}/${projection.name}`;
  const spanAttributes = {
    'rigmarket.context': metricLabels.context,
    'rigmarket.projection': projection.name,
  };
  const handle = (envelope: EventEnvelope, delivery: DeliveryInfo): Promise<void> =>
    consumeSpans(spanName, [envelope], spanAttributes, () => handleUntraced(envelope, delivery));
  const handleUntraced = async (envelope: EventEnvelope, delivery: DeliveryInfo): Promise<void> => {
    if (!isSource(projection, envelope) || envelope.context === own) return;
    projectionEventsHandled.inc(metricLabels);
    const invalid = invalidInboundEvent(projection.eventTypes, envelope);
    if (invalid !== undefined) {
      // Retrying cannot make it valid: parked at once (later events of its stream park behind it).
      await db.transaction((sql) => parkEvent(sql, schema, projection.name, envelope, invalid, 1));
      deadLetterLogger.error(`${schema}/${projection.name}: ${invalid}; parked in ${schema}.dead_letters`);
      return;
    }
    const checkpoint = { source: `${delivery.topic}:${delivery.partition}`, position: delivery.offset };
    // A type it does not apply only moves its position (and checkpoint): one statement, no transaction.
    if (
      !projection.eventTypes.includes(envelope.type) &&
      (await passOver(db, schema, projection, [{ envelope, delivery }]))
    )
      return;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const parkedBehind = await db.transaction(async (sql) => {
          const claim = await claimDelivered(sql, schema, projection, envelope, checkpoint);
          if (claim === 'parked')
            await parkEvent(sql, schema, projection.name, envelope, 'behind a parked event of its stream', 0);
          if (claim === 'claimed') {
            const event = upcast(envelope);
            await projection.apply(sql, event);
            signalApplied(sql, projection, [event]);
          }
          return claim === 'parked';
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
          await db.transaction((sql) => parkEvent(sql, schema, projection.name, envelope, message, attempt));
          deadLetterLogger.error(
            `${schema}/${projection.name}: event ${envelope.eventId} parked in ${schema}.dead_letters`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, projectionRetryDelayMs(attempt)));
      }
    }
  };
  return {
    groupId: projectionGroupId(groupPrefix, projection),
    topics: subscribedTopics(projection, own),
    handle,
    /**
     * A batch in one transaction: the stream positions claimed at once, the new events applied together
     * (applyBatch), one checkpoint per topic partition. A batch with an invalid event or an event of a
     * stream that has a parked one, or one whose transaction fails, is handled one event at a time as
     * above: the bad event is retried and parked alone, the others applied.
     */
    handleBatch: (deliveries: readonly Delivery[]) =>
      consumeSpans(
        spanName,
        deliveries.map((d) => d.envelope),
        spanAttributes,
        async () => {
          const mine = deliveries.filter(
            ({ envelope }) => isSource(projection, envelope) && envelope.context !== own,
          );
          if (mine.length === 0) return;
          const oneByOne = async () => {
            for (const { envelope, delivery } of mine) await handle(envelope, delivery);
          };
          if (
            mine.length === 1 ||
            mine.some(({ envelope }) => invalidInboundEvent(projection.eventTypes, envelope) !== undefined)
          )
            return oneByOne();
          const ends = new Map<string, string>();
          for (const { delivery } of mine)
            ends.set(`${delivery.topic}:${delivery.partition}`, delivery.offset);
          const checkpoints = [...ends].map(([source, position]) => ({ source, position }));
          // None of a type it applies: only positions and checkpoints move, in one statement (unless a stream
          // has a parked event: then one at a time, as below).
          if (
            !mine.some(({ envelope }) => projection.eventTypes.includes(envelope.type)) &&
            (await passOver(db, schema, projection, mine))
          ) {
            projectionEventsHandled.inc(metricLabels, mine.length);
            return;
          }
          let done = false;
          try {
            // The parked-event check is the claiming statement's (one round trip fewer).
            done = await db.transaction(async (sql) => {
              const outcome = await applyProjectionBatch(
                sql,
                schema,
                projection,
                mine.map(({ envelope }) => envelope),
                checkpoints,
                { unlessParked: true },
              );
              return outcome.parked !== true;
            });
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            deadLetterLogger.warn(
              `${schema}/${projection.name}: a batch of ${mine.length} events failed (${message}); applying them one at a time`,
            );
          }
          if (done) projectionEventsHandled.inc(metricLabels, mine.length);
          else await oneByOne();
        },
      ),
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

/**
 * Subscribes a context's projections of other contexts' events. Two or more share one subscription (one
 * consumer group over Kafka, `<prefix>.projections`) that applies a delivery to all of them in one transaction
 * (`contextProjectionsSubscription`); a single one keeps a group of its own (`<prefix>.<name>.v<version>`).
 */
export async function subscribeProjections(
  transport: Transport,
  db: Database,
  schema: string,
  projections: readonly Projection[],
  groupPrefix: string,
  own?: ContextName,
): Promise<void> {
  if (projections.length > 1) {
    await transport.subscribe(contextProjectionsSubscription(db, schema, projections, groupPrefix, own));
    return;
  }
  for (const projection of projections) {
    await transport.subscribe(projectionSubscription(db, schema, projection, groupPrefix, own));
  }
}

/**
 * One subscription for several projections of a context: a delivery is applied to every projection it
 * concerns in one transaction, with a fixed number of statements besides the projections' own: one claims
 * (locks and reads) the stream positions of every projection and reports which of them has a parked event
 * on a delivered stream, one moves the positions and writes the checkpoints of all of them (so a delivery
 * costs BEGIN, 2 statements, the applies and COMMIT, instead of that per projection). A projection that
 * cannot take part, because one of its events is invalid or one of its streams has a parked event, is left
 * out and handled afterwards by its own subscription's path (`projectionSubscription`: parked at once, or
 * parked behind). If the shared transaction fails (a projection's apply threw), nothing of it stays and each
 * projection handles the delivery alone, in its own transaction, with its retries and parking, so one
 * failing read model never holds back or corrupts the others.
 */
export function contextProjectionsSubscription(
  db: Database,
  schema: string,
  projections: readonly Projection[],
  groupPrefix: string,
  own?: ContextName,
): Subscription {
  const alone = new Map(
    projections.map((p) => [p.name, projectionSubscription(db, schema, p, groupPrefix, own)] as const),
  );
  const byName = new Map(projections.map((p) => [p.name, p] as const));
  const separately = async (name: string, deliveries: readonly Delivery[]): Promise<void> => {
    const subscription = alone.get(name)!;
    if (deliveries.length === 1) await subscription.handle(deliveries[0]!.envelope, deliveries[0]!.delivery);
    else await subscription.handleBatch!(deliveries);
  };
  const spanAttributes = { 'rigmarket.context': contextOfSchema(schema) };
  const handleBatch = (deliveries: readonly Delivery[]): Promise<void> =>
    consumeSpans(
      `${schema}/projections`,
      deliveries.map((d) => d.envelope),
      spanAttributes,
      async () => {
        // Each projection's share of the delivery, in delivery order.
        const shares = new Map<string, Delivery[]>();
        for (const projection of projections) {
          const mine = deliveries.filter(
            ({ envelope }) => isSource(projection, envelope) && envelope.context !== own,
          );
          if (mine.length > 0) shares.set(projection.name, mine);
        }
        const later = new Set<string>();
        for (const [name, mine] of shares) {
          const { eventTypes } = byName.get(name)!;
          if (mine.some(({ envelope }) => invalidInboundEvent(eventTypes, envelope) !== undefined))
            later.add(name);
        }
        const together = [...shares.keys()].filter((name) => !later.has(name));
        if (together.length > 0) {
          const work = together.map((name) => [byName.get(name)!, shares.get(name)!] as const);
          // No event of a type any of them applies (most events of a stream concern only some readers): only
          // positions and checkpoints move, in one statement outside a transaction.
          const passed = work.some(([p, mine]) =>
            mine.some(({ envelope }) => p.eventTypes.includes(envelope.type)),
          )
            ? undefined
            : await passOverShares(db, schema, work);
          try {
            const parked = passed ?? (await db.transaction((sql) => applyShares(sql, schema, work)));
            for (const name of together) {
              if (parked.has(name)) later.add(name);
              else
                projectionEventsHandled.inc(
                  { context: contextOfSchema(schema), projection: name },
                  shares.get(name)!.length,
                );
            }
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            deadLetterLogger.warn(
              `${schema}: a delivery of ${deliveries.length} events to ${together.length} projections failed (${message}); applying it to each projection alone`,
            );
            for (const name of together) later.add(name);
          }
        }
        for (const name of later) await separately(name, shares.get(name)!);
      },
    );
  return {
    groupId: contextProjectionsGroupId(groupPrefix, projections),
    topics: [...new Set(projections.flatMap((p) => subscribedTopics(p, own)))],
    handle: (envelope, delivery) => handleBatch([{ envelope, delivery }]),
    handleBatch,
    // Over Kafka each projection had a group of its own before: a new shared group starts where they left
    // off (a projection new to the context or at a new version, with no such group, makes its topics read
    // from the beginning, which fills it; what the others read again is skipped by their positions).
    replaces: projections.map((p) => ({
      groupId: projectionGroupId(groupPrefix, p),
      topics: subscribedTopics(p, own),
    })),
  };
}

/**
 * The consumer group of a context's projections: `<prefix>.projections.<8 hex digits>`, the digits naming the
 * set of projections and their versions, so that a projection added to the context (or a new version of one)
 * gets a new group, which starts where the projections' own groups left off (`Subscription.replaces`).
 */
export function contextProjectionsGroupId(groupPrefix: string, projections: readonly Projection[]): string {
  const members = projections.map((p) => `${p.name}.v${p.version}`).sort();
  return `${groupPrefix}.projections.${createHash('sha256').update(members.join('\n')).digest('hex').slice(0, 8)}`;
}

/**
 * Delivered events of types none of `shares`' projections apply (`contextProjectionsSubscription`, and
 * `passOver` for one projection), in one statement: each projection's
 * delivered streams move to their last position (not back) and, where one moved, its checkpoints are written;
 * a projection with a parked event on a delivered stream is left out (nothing of it written). Answers those
 * left out, or undefined when the statement failed (the caller takes the transaction's path then).
 */
async function passOverShares(
  db: Database,
  schema: string,
  shares: ReadonlyArray<readonly [Projection, readonly Delivery[]]>,
): Promise<Set<string> | undefined> {
  const last = new Map<string, number>();
  const checkpoints: Array<{ projection: string; version: number; source: string; position: string }> = [];
  for (const [projection, mine] of shares) {
    const ends = new Map<string, string>();
    for (const { envelope: e, delivery } of mine) {
      const key = `${projection.name}\n${e.streamId}`;
      last.set(key, Math.max(last.get(key) ?? 0, e.streamPosition));
      ends.set(`${delivery.topic}:${delivery.partition}`, delivery.offset);
    }
    for (const [source, position] of ends)
      checkpoints.push({ projection: projection.name, version: projection.version, source, position });
  }
  // Sorted as applyShares sorts its claims: overlapping appliers lock rows in the same order.
  const keys = [...last.keys()].sort();
  const rows = await db
    .query<{ projection: string }>(
      `WITH input AS (
         SELECT s.projection, s.stream_id, s.position, s.n
           FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS s (projection, stream_id, position, n)
       ), parked AS (
         SELECT DISTINCT d.subscriber AS projection FROM ${schema}.dead_letters d
          WHERE d.subscriber = ANY($1::text[]) AND d.stream_id = ANY($2::text[])
            AND (d.subscriber, d.stream_id) IN (SELECT projection, stream_id FROM input)
       ), moved AS (
         INSERT INTO ${schema}.projection_stream_positions AS p (projection, stream_id, position)
         SELECT i.projection, i.stream_id, i.position FROM input i
          WHERE i.projection NOT IN (SELECT projection FROM parked)
          ORDER BY i.n
         ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position WHERE p.position < EXCLUDED.position
         RETURNING p.projection
       ), checkpoints AS (
         INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
         SELECT c.projection, c.version, c.source, c.position, now()
           FROM unnest($4::text[], $5::int[], $6::text[], $7::text[]) WITH ORDINALITY AS c (projection, version, source, position, n)
          WHERE c.projection IN (SELECT projection FROM moved)
          ORDER BY c.n
         ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now()
       )
       SELECT projection FROM parked`,
      [
        keys.map((k) => k.split('\n')[0]!),
        keys.map((k) => k.split('\n')[1]!),
        keys.map((k) => last.get(k)!),
        checkpoints.map((c) => c.projection),
        checkpoints.map((c) => c.version),
        checkpoints.map((c) => c.source),
        checkpoints.map((c) => c.position),
      ],
    )
    .catch(() => undefined);
  return rows && new Set(rows.map((r) => r.projection));
}

/**
 * The shared transaction of `contextProjectionsSubscription`: claims every (projection, stream) position at
 * once (sorted, so overlapping appliers lock rows in the same order) and, in the same statement, finds the
 * projections with a parked event on one of the delivered streams; applies each other projection's events
 * past its positions; then one statement moves the positions and writes the checkpoints. Answers the
 * projections left out because of a parked event (nothing of theirs is written).
 */
async function applyShares(
  sql: Sql,
  schema: string,
  shares: ReadonlyArray<readonly [Projection, readonly Delivery[]]>,
): Promise<Set<string>> {
  const keys: Array<[string, string]> = [];
  for (const [projection, mine] of shares)
    for (const streamId of new Set(mine.map(({ envelope }) => envelope.streamId)))
      keys.push([projection.name, streamId]);
  keys.sort(([pa, sa], [pb, sb]) => (pa === pb ? (sa < sb ? -1 : sa > sb ? 1 : 0) : pa < pb ? -1 : 1));
  const rows = await sql.query<{ projection: string; stream_id: string; position: number; parked: boolean }>(
    `WITH claimed AS (
       INSERT INTO ${schema}.projection_stream_positions AS p (projection, stream_id, position)
       SELECT s.projection, s.stream_id, 0
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s (projection, stream_id, n) ORDER BY s.n
       ON CONFLICT (projection, stream_id) DO UPDATE SET position = p.position
       RETURNING p.projection, p.stream_id, p.position)
     SELECT projection, stream_id, position, false AS parked FROM claimed
     UNION ALL
     SELECT DISTINCT d.subscriber, '', 0, true FROM ${schema}.dead_letters d
      WHERE d.subscriber = ANY($1::text[]) AND d.stream_id = ANY($2::text[])
        AND (d.subscriber, d.stream_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [keys.map(([p]) => p), keys.map(([, s]) => s)],
  );
  const parked = new Set(rows.filter((r) => r.parked).map((r) => r.projection));
  const positions = new Map<string, number>();
  for (const row of rows)
    if (!row.parked) positions.set(`${row.projection}\n${row.stream_id}`, Number(row.position));
  const moved: Array<{ projection: string; streamId: string; position: number }> = [];
  const checkpoints: Array<{ projection: string; version: number; source: string; position: string }> = [];
  for (const [projection, mine] of shares) {
    if (parked.has(projection.name)) continue;
    const fresh: EventEnvelope[] = [];
    const touched = new Set<string>();
    for (const { envelope } of mine) {
      const key = `${projection.name}\n${envelope.streamId}`;
      if (envelope.streamPosition <= (positions.get(key) ?? 0)) continue;
      positions.set(key, envelope.streamPosition);
      touched.add(envelope.streamId);
      fresh.push(envelope);
    }
    if (fresh.length === 0) continue;
    await applyFresh(sql, projection, fresh);
    signalApplied(sql, projection, fresh);
    for (const streamId of touched)
      moved.push({
        projection: projection.name,
        streamId,
        position: positions.get(`${projection.name}\n${streamId}`)!,
      });
    const ends = new Map<string, string>();
    for (const { delivery } of mine) ends.set(`${delivery.topic}:${delivery.partition}`, delivery.offset);
    for (const [source, position] of ends)
      checkpoints.push({ projection: projection.name, version: projection.version, source, position });
  }
  if (moved.length === 0) return parked;
  await sql.execute(
    `WITH checkpoints AS (
       INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position, updated_at)
       SELECT c.projection, c.version, c.source, c.position, now()
         FROM unnest($4::text[], $5::int[], $6::text[], $7::text[]) WITH ORDINALITY AS c (projection, version, source, position, n)
        ORDER BY c.n
       ON CONFLICT (projection, version, source) DO UPDATE SET position = EXCLUDED.position, updated_at = now())
     INSERT INTO ${schema}.projection_stream_positions (projection, stream_id, position)
     SELECT s.projection, s.stream_id, s.position FROM unnest($1::text[], $2::text[], $3::int[]) AS s (projection, stream_id, position)
     ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position`,
    [
      moved.map((m) => m.projection),
      moved.map((m) => m.streamId),
      moved.map((m) => m.position),
      checkpoints.map((c) => c.projection),
      checkpoints.map((c) => c.version),
      checkpoints.map((c) => c.source),
      checkpoints.map((c) => c.position),
    ],
  );
  return parked;
}

/** Events per page that a rebuild reads (keyset pages on the global position) and applies in one batch. */
export const REBUILD_PAGE_SIZE = 5000;

/**
 * Rebuilds a read model from the events of its sources and returns the events applied. Without `source`
 * (every source read from the event stores in this database) it works in bounded transactions on scratch
 * tables and swaps them in at the end (`rebuildInChunks`); with a `source` (another context's events read
 * from Kafka) it replays in one transaction, as `replayProjection` does.
 */
export async function rebuildProjection(
  db: Database,
  schema: string,
  projection: Projection,
  source?: (sql: Sql) => EventSource,
): Promise<number> {
  if (!source) return rebuildInChunks(db, schema, projection);
  return db.transaction((sql) => replayProjection(sql, schema, projection, source(sql)));
}

/**
 * A context's read model rebuilt from the events: in chunks from the event stores in this database, or in
 * one transaction when another context's events come from `remote` (Kafka, separate databases).
 */
export function rebuildContextProjection(
  db: Database,
  own: ContextName,
  projection: Projection,
  remote?: EventSource,
): Promise<number> {
  const foreign = projection.sources.some((s) => s.context !== own);
  return rebuildProjection(
    db,
    CONTEXT_SCHEMAS[own],
    projection,
    remote && foreign ? (sql) => contextEventSource(own, sql, remote) : undefined,
  );
}

/**
 * A statement runner that sends a projection's writes to other tables: each schema-qualified table name
 * of `tables` in the statement's text is replaced by its scratch name (a projection's `tables` are the only
 * tables its `apply` reads or writes).
 */
function redirected(sql: Sql, tables: ReadonlyMap<string, string>): Sql {
  const rules = [...tables].map(
    ([from, to]) =>
      [new RegExp(`(?<![\\w$."])${from.replace(/[.$]/g, (c) => `\\${c}`)}(?![\\w$])`, 'g'), to] as const,
  );
  const rewrite = (text: string): string => rules.reduce((t, [pattern, to]) => t.replace(pattern, to), text);
  return {
    query: (text, params) => sql.query(rewrite(text), params),
    execute: (text, params) => sql.execute(rewrite(text), params),
  };
}

/** The context's event store if its tables exist in this database. */
async function storeIn(sql: Sql, context: ContextName): Promise<EventStore | undefined> {
  const [row] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
    `${CONTEXT_SCHEMAS[context]}.events`,
  ]);
  return row?.found ? new EventStore(context, CONTEXT_SCHEMAS[context]) : undefined;
}

/** An index definition without its name and table, to pair a table's indexes with its copy's. */
const indexShape = (definition: string): string =>
  definition.replace(/^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ /, '$1');

/**
 * Puts the rebuilt `scratch` table in the place of `live` (in the caller's transaction, which holds an
 * ACCESS EXCLUSIVE lock on it): drops `live`, renames `scratch` and each of its indexes (a primary key's
 * or unique constraint's with it) to the names they had on `live`, so queries and later migrations find
 * the same names.
 */
async function swapTable(sql: Sql, live: string, scratch: string): Promise<void> {
  const indexes = (table: string) =>
    sql.query<{ name: string; definition: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = $1::regclass ORDER BY c.relname`,
      [table],
    );
  const names = new Map<string, string[]>();
  for (const index of await indexes(live)) {
    const shape = indexShape(index.definition);
    names.set(shape, [...(names.get(shape) ?? []), index.name]);
  }
  const copies = await indexes(scratch);
  const [schema, name] = live.split('.') as [string, string];
  await sql.execute(`DROP TABLE ${live}`);
  await sql.execute(`ALTER TABLE ${scratch} RENAME TO ${name}`);
  for (const copy of copies) {
    const original = names.get(indexShape(copy.definition))?.shift();
    if (original && original !== copy.name)
      await sql.execute(`ALTER INDEX ${schema}.${copy.name} RENAME TO ${original}`);
  }
}

/**
 * Rebuild without one long transaction: the projection is replayed into scratch copies of its tables
 * (`<table>__rebuild`, same columns, constraints and indexes), one transaction per page of events read by
 * keyset (the next page is read while one is applied), while readers and the live projection keep using the
 * live tables. Pages read every committed event (not only those older than every open transaction, so a
 * long transaction elsewhere does not stall the rebuild); an event that was still in flight when its page
 * was read is read with its stream when a later event of the stream shows the gap, else at the end by its
 * transaction id (at or above the xmin taken at the start). A last short transaction locks the positions
 * table (writers wait) and the live tables, applies those late events and the ones committed since the
 * last page, puts each scratch table in the place of its live one (drop, rename, indexes renamed to the
 * live names) and writes the stream positions and checkpoints. Writers take a stream position before they
 * touch a read model, so it locks the positions table first, in the same order. One rebuild of a given
 * read model at a time.
 */
export async function rebuildInChunks(
  db: Database,
  schema: string,
  projection: Projection,
  pageSize = REBUILD_PAGE_SIZE,
): Promise<number> {
  const scratch = new Map(projection.tables.map((t) => [t, `${t}__rebuild`]));
  const dropScratch = async (sql: Sql) => {
    for (const table of scratch.values()) await sql.execute(`DROP TABLE IF EXISTS ${table}`);
  };
  await db.transaction(async (sql) => {
    await dropScratch(sql);
    for (const [live, table] of scratch)
      await sql.execute(`CREATE TABLE ${table} (LIKE ${live} INCLUDING ALL)`);
  });
  try {
    const positions = new Map<string, number>();
    let applied = 0;
    const applyPage = async (sql: Sql, store: EventStore, page: readonly EventEnvelope[]) => {
      const fresh: EventEnvelope[] = [];
      for (const event of page) {
        const at = positions.get(event.streamId) ?? 0;
        if (!isSource(projection, event) || event.streamPosition <= at) continue;
        // A gap: earlier events of the stream were in flight when their page was read (they committed
        // before this one was written), so they are read now, to keep the stream's order.
        if (event.streamPosition > at + 1)
          for (const missed of await store.readStream(sql, event.streamId, at))
            if (missed.streamPosition < event.streamPosition) fresh.push(missed);
        positions.set(event.streamId, event.streamPosition);
        fresh.push(event);
      }
      await applyFresh(redirected(sql, scratch), projection, fresh);
      applied += fresh.length;
    };
    const contexts = [...new Set(projection.sources.map((s) => s.context))];
    const reached = new Map<ContextName, string>();
    const [{ xmin } = { xmin: '0' }] = await db.query<{ xmin: string }>(
      `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`,
    );
    for (const context of contexts) {
      const streamTypes = projection.sources.filter((s) => s.context === context).map((s) => s.streamType);
      const store = await storeIn(db, context);
      let after = '0';
      if (store) {
        let next = store.readAll(db, after, pageSize, streamTypes, false);
        for (;;) {
          const page = await next;
          if (page.length === 0) break;
          after = page[page.length - 1]!.globalPosition;
          next = store.readAll(db, after, pageSize, streamTypes, false);
          next.catch(() => undefined); // awaited on the next turn; a failure of this page comes first
          await db.transaction((sql) => applyPage(sql, store, page));
        }
      }
      reached.set(context, after);
    }
    await db.transaction(async (sql) => {
      await sql.execute(`LOCK TABLE ${schema}.projection_stream_positions IN EXCLUSIVE MODE`);
      await sql.execute(`LOCK TABLE ${projection.tables.join(', ')} IN ACCESS EXCLUSIVE MODE`);
      // Every writer of the live tables has committed now: read what they committed since the last
      // page, in-flight transactions included (they apply their own events once this one commits).
      for (const context of contexts) {
        const streamTypes = projection.sources.filter((s) => s.context === context).map((s) => s.streamType);
        const store = await storeIn(sql, context);
        if (!store) continue;
        let after = reached.get(context) ?? '0';
        await applyPage(sql, store, await store.readWrittenSince(sql, xmin, after, streamTypes));
        for (;;) {
          const page = await store.readAll(sql, after, pageSize, streamTypes, false);
          if (page.length === 0) break;
          after = page[page.length - 1]!.globalPosition;
          await applyPage(sql, store, page);
        }
        reached.set(context, after);
      }
      for (const [live, table] of scratch) {
        await swapTable(sql, live, table);
      }
      readModelsChanged(sql, projection.tables);
      await sql.execute(`DELETE FROM ${schema}.projection_stream_positions WHERE projection = $1`, [
        projection.name,
      ]);
      const all = [...positions];
      for (let from = 0; from < all.length; from += 10_000)
        await saveStreamPositions(sql, schema, projection.name, all.slice(from, from + 10_000));
      await sql.execute(`DELETE FROM ${schema}.projection_checkpoints WHERE projection = $1`, [
        projection.name,
      ]);
      for (const [context, position] of reached)
        await sql.execute(
          `INSERT INTO ${schema}.projection_checkpoints (projection, version, source, position) VALUES ($1, $2, $3, $4)`,
          [projection.name, projection.version, `store:${context}`, position],
        );
    });
    for (const table of projection.tables) await db.execute(`ANALYZE ${table}`);
    return applied;
  } finally {
    await db.transaction(dropScratch).catch(() => undefined);
  }
}

/**
 * A projection replayed in the caller's transaction (a migration that changes a read model's shape
 * replays it this way; `rigmarket verify` replays in a transaction it rolls back): empties the
 * projection's tables and positions, applies every source event, a batch at a time.
 */
export async function replayProjection(
  sql: Sql,
  schema: string,
  projection: Projection,
  source: EventSource = storeEventSource(sql, REBUILD_PAGE_SIZE),
): Promise<number> {
  for (const table of projection.tables) await sql.execute(`DELETE FROM ${table}`);
  readModelsChanged(sql, projection.tables);
  await sql.execute(`DELETE FROM ${schema}.projection_stream_positions WHERE projection = $1`, [
    projection.name,
  ]);
  await sql.execute(`DELETE FROM ${schema}.projection_checkpoints WHERE projection = $1`, [projection.name]);
  let applied = 0;
  const contexts = [...new Set(projection.sources.map((s) => s.context))];
  // The positions were just deleted, so they are kept here and written once per batch (one multi-row
  // upsert), and each batch's new events are applied together (applyBatch).
  const positions = new Map<string, number>();
  for (const context of contexts) {
    const streamTypes = projection.sources.filter((s) => s.context === context).map((s) => s.streamType);
    const reached = await source.replay(context, streamTypes, async (batch) => {
      const fresh: EventEnvelope[] = [];
      for (const event of batch) {
        if (!isSource(projection, event) || event.streamPosition <= (positions.get(event.streamId) ?? 0))
          continue;
        positions.set(event.streamId, event.streamPosition);
        fresh.push(event);
      }
      await applyFresh(sql, projection, fresh);
      applied += fresh.length;
      const touched = new Set(fresh.map((e) => e.streamId));
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
