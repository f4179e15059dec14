import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type ContextName,
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  currentSchemaVersion,
  isPublicEvent,
  streamTypeOf,
  topicFor,
  upcast,
} from '@rigmarket/contracts';
import { Database, type OpenTransaction, type Sql, transactionOf } from './database';
import { chainTime, eventHash, lockChainHead } from './event-chain';
import { currentTraceparent } from './tracing';

export class WrongExpectedVersion extends ApiError {
  constructor(
    readonly streamId: string,
    readonly expected: number,
  ) {
    super(
      409,
      'concurrency_conflict',
      `Stream ${streamId} changed while the command ran (expected version ${expected})`,
    );
  }
}

/** An `events` row as the store selects it (COLUMNS). */
export interface EventRow {
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_type: string;
  stream_position: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata;
  occurred_at: Date | string;
}

function toEnvelope(context: ContextName, row: EventRow): EventEnvelope {
  return {
    eventId: row.event_id,
    type: row.type,
    schemaVersion: Number(row.schema_version),
    streamId: row.stream_id,
    streamType: row.stream_type,
    streamPosition: Number(row.stream_position),
    globalPosition: String(row.global_position),
    occurredAt: new Date(row.occurred_at).toISOString(),
    context,
    data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
  };
}

const COLUMNS = `global_position::text AS global_position, event_id, stream_id, stream_type, stream_position, type,
  schema_version, data, metadata, occurred_at`;

/** One context's event store: a Postgres table, appended to with an expected version. */
/**
 * The chain heads each open transaction (its Sql) holds locked, by schema, as its last append left them: a
 * second append in the same transaction (a command and the workflow step it records) links to it without
 * locking again.
 */
const lockedHeads = new WeakMap<Sql, Map<string, string>>();

/**
 * Each context's chain head as this process's last committed appending transaction left it, by database and
 * schema. A transaction's first append links to it instead of reading (and locking) the head row first: the
 * append's statement writes nothing unless the row still holds that hash, and then the row is read and the
 * append runs again. That happens after another writer's commit: another process (a second replica, an
 * import), or, on PostgreSQL, a transaction of this process that took its turn on the head meanwhile. On
 * PostgreSQL the statement's check locks the row (a concurrent appender's commit is waited for and then seen);
 * embedded, a transaction has the database to itself. It is used only while no other transaction of this
 * process appends to that context: one that does is about to move the head, so the others lock the row and
 * wait their turn at once (a failed try would lengthen the turns they take on the head).
 */
const committedHeads = new WeakMap<Database, Map<string, string>>();

/** How many transactions of this process have appended to each context and not yet ended. */
const appendingTransactions = new WeakMap<Database, Map<string, number>>();

/**
 * The head to link a transaction's first append to a context without reading the row: the one this process's
 * last commit left, if no other of its transactions is appending to the context. Counts the transaction as
 * appending until it ends, and then keeps the head it leaves (committed), or none (after a rollback or a
 * failed commit: the next transaction reads the row).
 */
function headToLinkTo(sql: Sql, transaction: OpenTransaction, schema: string): string | undefined {
  const { database } = transaction;
  const appending = appendingTransactions.get(database) ?? new Map<string, number>();
  appendingTransactions.set(database, appending);
  const heads = committedHeads.get(database) ?? new Map<string, string>();
  committedHeads.set(database, heads);
  const others = appending.get(schema) ?? 0;
  appending.set(schema, others + 1);
  transaction.onEnd((committed) => {
    appending.set(schema, (appending.get(schema) ?? 1) - 1);
    // On PostgreSQL two commits' callbacks may run out of order: a stale head costs the next append a retry.
    const left = lockedHeads.get(sql)?.get(schema);
    if (committed && left !== undefined) heads.set(schema, left);
    else heads.delete(schema);
  });
  return others === 0 ? heads.get(schema) : undefined;
}

/** A read model's position on a stream, as applyInlineProjections moves it. */
export interface ProjectionPosition {
  projection: string;
  streamId: string;
  position: number;
}

export interface AppendOptions {
  /**
   * Positions of read models kept in the same transaction, written in the append's statement (sorted by
   * the caller, so two transactions lock those rows in the same order).
   */
  projectionPositions?: readonly ProjectionPosition[];
}

/** One stream's part of an append: its events at `expectedVersion + 1...`. */
export interface StreamAppend {
  streamId: string;
  expectedVersion: number;
  events: readonly DomainEvent[];
}

export class EventStore {
  constructor(
    readonly context: ContextName,
    readonly schema: string,
  ) {}

  /** A stream's events in order; with `afterPosition`, only those after it (the tail after a snapshot). */
  async readStream(sql: Sql, streamId: string, afterPosition = 0): Promise<EventEnvelope[]> {
    const rows = await sql.query<EventRow>(
      afterPosition > 0
        ? `SELECT ${COLUMNS} FROM ${this.schema}.events WHERE stream_id = $1 AND stream_position > $2 ORDER BY stream_position`
        : `SELECT ${COLUMNS} FROM ${this.schema}.events WHERE stream_id = $1 ORDER BY stream_position`,
      afterPosition > 0 ? [streamId, afterPosition] : [streamId],
    );
    // Folded by deciders, which know only the current payloads: older versions are upcast here.
    return rows.map((r) => upcast(toEnvelope(this.context, r)));
  }

  /**
   * A snapshotted stream's snapshot of the given shape (`stateVersion`), if any, and its events after it, in
   * one round trip: readStream after the snapshot's version (from the start without one).
   */
  async readStreamFromSnapshot(
    sql: Sql,
    streamId: string,
    stateVersion: number,
  ): Promise<{ snapshot?: { version: number; state: unknown }; events: EventEnvelope[] }> {
    const rows = await sql.query<EventRow & { snapshot: boolean }>(
      `WITH snapshot AS (
         SELECT version, state FROM ${this.schema}.snapshots WHERE stream_id = $1 AND state_version = $2)
       SELECT NULL::text AS global_position, NULL::uuid AS event_id, NULL::text AS stream_id,
              NULL::text AS stream_type, version AS stream_position, NULL::text AS type,
              NULL::integer AS schema_version, state AS data, NULL::jsonb AS metadata,
              NULL::timestamptz AS occurred_at, true AS snapshot
         FROM snapshot
       UNION ALL
       SELECT ${COLUMNS}, false AS snapshot FROM ${this.schema}.events
        WHERE stream_id = $1 AND stream_position > COALESCE((SELECT version FROM snapshot), 0)
       ORDER BY snapshot DESC, stream_position`,
      [streamId, stateVersion],
    );
    const first = rows[0];
    const snapshot = first?.snapshot
      ? {
          version: Number(first.stream_position),
          state: typeof first.data === 'string' ? JSON.parse(first.data) : first.data,
        }
      : undefined;
    const events = (snapshot ? rows.slice(1) : rows).map((r) => upcast(toEnvelope(this.context, r)));
    return snapshot ? { snapshot, events } : { events };
  }

  /**
   * Events after `afterGlobalPosition` (a keyset page), in commit-safe order: only events of transactions
   * older than every one still in flight, unless `settledOnly` is false (every committed event: for a
   * caller that holds locks which every writer it cares about has released).
   */
  async readAll(
    sql: Sql,
    afterGlobalPosition = '0',
    limit = 1000,
    streamTypes?: readonly string[],
    settledOnly = true,
  ): Promise<EventEnvelope[]> {
    const rows = await sql.query<EventRow>(
      `SELECT ${COLUMNS} FROM ${this.schema}.events
        WHERE global_position > $1::bigint
          ${settledOnly ? 'AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())' : ''}
          ${streamTypes ? 'AND stream_type = ANY($3)' : ''}
        ORDER BY events.global_position LIMIT $2`,
      streamTypes ? [afterGlobalPosition, limit, streamTypes] : [afterGlobalPosition, limit],
    );
    return rows.map((r) => toEnvelope(this.context, r));
  }

  /**
   * Events up to `upToGlobalPosition` written by transactions with an id at or above `fromXmin` (a
   * snapshot's xmin taken earlier): the ones that may still have been in flight, so unseen, when pages
   * were read by `readAll(..., false)` after that snapshot.
   */
  async readWrittenSince(
    sql: Sql,
    fromXmin: string,
    upToGlobalPosition: string,
    streamTypes: readonly string[],
  ): Promise<EventEnvelope[]> {
    const rows = await sql.query<EventRow>(
      `SELECT ${COLUMNS} FROM ${this.schema}.events
        WHERE global_position <= $1::bigint AND transaction_id >= $2::xid8 AND stream_type = ANY($3)
        ORDER BY events.global_position`,
      [upToGlobalPosition, fromXmin, streamTypes],
    );
    return rows.map((r) => toEnvelope(this.context, r));
  }

  /**
   * Appends events at `expectedVersion + 1...` and writes the public ones to the outbox, in the caller's
   * transaction. A concurrent append to the same stream makes this throw WrongExpectedVersion. Each event
   * is hashed onto the context's chain (event-chain.ts): the chain head stays locked until the caller's
   * transaction ends, so the context's appending transactions take turns from here to their commit. The
   * outbox relay relies on it: outbox ids are drawn under that lock, so they become visible in id order.
   * Given the Database itself (autocommit), the append runs in a transaction of its own.
   */
  async append(
    sql: Sql,
    streamId: string,
    expectedVersion: number,
    events: readonly DomainEvent[],
    metadata: EventMetadata,
    occurredAt: Date,
    options: AppendOptions = {},
  ): Promise<EventEnvelope[]> {
    return this.appendStreams(sql, [{ streamId, expectedVersion, events }], metadata, occurredAt, options);
  }

  /**
   * append() for several streams at once (a command's events and a workflow's step recorded with them): one
   * INSERT for all of them (up to 1,000 events), hashed onto the chain in the order given, the envelopes
   * returned in that order. A concurrent append to any of the streams makes it throw WrongExpectedVersion
   * and write nothing (the caller's transaction then rolls back every stream's part).
   */
  async appendStreams(
    sql: Sql,
    appends: readonly StreamAppend[],
    metadata: EventMetadata,
    occurredAt: Date,
    options: AppendOptions = {},
  ): Promise<EventEnvelope[]> {
    const parts = appends.filter((a) => a.events.length > 0);
    if (parts.length === 0) return [];
    // Autocommit would release the chain head after its first statement: the outbox ids drawn after it
    // could then commit out of order (and the events without their outbox rows).
    if (sql instanceof Database)
      return sql.transaction((tx) => this.appendStreams(tx, parts, metadata, occurredAt, options));
    const at = occurredAt.toISOString();
    const metadataJson = JSON.stringify(metadata);
    const envelopes: EventEnvelope[] = parts.flatMap(({ streamId, expectedVersion, events }) => {
      const streamType = streamTypeOf(streamId);
      return events.map((event, i) => ({
        eventId: randomUUID(),
        type: event.type,
        schemaVersion: currentSchemaVersion(this.context, event.type),
        streamId,
        streamType,
        streamPosition: expectedVersion + i + 1,
        globalPosition: '',
        occurredAt: at,
        context: this.context,
        data: event.data,
        metadata,
      }));
    });
    // Hashed over what is stored: the JSON the columns get, read back as a reader will (no undefined, no Date).
    const dataJson = envelopes.map((e) => JSON.stringify(e.data));
    const storedMetadata: unknown = JSON.parse(metadataJson);
    const time = chainTime(at);
    const held = lockedHeads.get(sql)?.get(this.schema);
    const transaction = held === undefined ? transactionOf(sql) : undefined;
    const known = transaction && headToLinkTo(sql, transaction, this.schema);
    const chainFrom = (head: string): string[] => {
      let link = head;
      return envelopes.map((e, i) => {
        link = eventHash(link, {
          eventId: e.eventId,
          streamId: e.streamId,
          streamType: e.streamType,
          streamPosition: e.streamPosition,
          type: e.type,
          schemaVersion: e.schemaVersion,
          data: JSON.parse(dataJson[i]!),
          metadata: storedMetadata,
          occurredAt: time,
        });
        return link;
      });
    };
    let hashes = chainFrom(held ?? known ?? (await lockChainHead(sql, this.schema)));
    // The trace context of the work appending them rides with the outbox row (tracing on only).
    const traceparent = currentTraceparent();
    // Multi-row INSERTs (one round trip for a command's events, their outbox rows and the positions;
    // chunks stay under the 65,535 parameters).
    for (let from = 0; from < envelopes.length; from += 1000) {
      const chunk = envelopes.slice(from, from + 1000);
      const insert = (linkedTo?: string) =>
        this.insertEvents(sql, parts, chunk, {
          dataJson: dataJson.slice(from, from + 1000),
          hashes: hashes.slice(from, from + 1000),
          metadataJson,
          traceparent,
          // Moved once, with the last chunk (to the last event's position).
          positions: from + 1000 >= envelopes.length ? options.projectionPositions : undefined,
          linkedTo,
          lockToCheck: !transaction?.sole,
        });
      if (from > 0 || known === undefined) await insert();
      else if (!(await insert(known))) {
        // The head row moved since this process's last commit: link to what it holds.
        hashes = chainFrom(await lockChainHead(sql, this.schema));
        await insert();
      }
    }
    const previous = hashes[hashes.length - 1]!;
    const heads = lockedHeads.get(sql) ?? new Map<string, string>();
    heads.set(this.schema, previous);
    lockedHeads.set(sql, heads);
    return envelopes;
  }

  private async insertEvents(
    sql: Sql,
    parts: readonly StreamAppend[],
    envelopes: EventEnvelope[],
    chunk: {
      dataJson: string[];
      hashes: string[];
      metadataJson: string;
      traceparent: string | undefined;
      positions: readonly ProjectionPosition[] | undefined;
      /** Write only if the chain-head row still holds this hash (else nothing, and false). */
      linkedTo?: string;
      /** Lock the head row in that check (PostgreSQL: other transactions append concurrently). */
      lockToCheck?: boolean;
    },
  ): Promise<boolean> {
    const { dataJson, hashes, metadataJson, traceparent, positions, linkedTo, lockToCheck } = chunk;
    const at = envelopes[0]!.occurredAt;
    const params: unknown[] = [hashes[hashes.length - 1]];
    const values = envelopes.map((e, i) => {
      const base = params.push(
        e.eventId,
        e.streamId,
        e.streamType,
        e.streamPosition,
        e.type,
        e.schemaVersion,
      );
      params.push(dataJson[i], metadataJson, at, hashes[i]);
      return `($${base - 5}::uuid, $${base - 4}::text, $${base - 3}::text, $${base - 2}::int, $${base - 1}::text, $${base}::int, $${base + 1}::jsonb, $${base + 2}::jsonb, $${base + 3}::timestamptz, $${base + 4}::text)`;
    });
    // Checked in the statement itself: the INSERT, and so everything joined to it, writes no row unless
    // the head row holds the hash the events were linked to. Locked, a row another transaction changed is
    // waited for and read as it committed it (READ COMMITTED), and stays this transaction's until it ends.
    const linked =
      linkedTo === undefined
        ? ''
        : ` WHERE (SELECT hash FROM ${this.schema}.event_chain_head WHERE id = 1${lockToCheck ? ' FOR UPDATE' : ''}) = $${params.push(linkedTo)}`;
    // The public events' outbox rows, in the same statement: their envelope gets the global position the
    // insert gave the event (jsonb keeps no key order, so the stored envelope is the same as written whole).
    const published = envelopes.filter((e) => isPublicEvent(this.context, e.type));
    let outbox = '';
    if (published.length > 0) {
      const n = params.push(
        published.map((e) => topicFor(this.context, e.streamType)),
        published.map((e) => e.streamId),
        published.map((e) => e.streamPosition),
        published.map((e) => JSON.stringify(traceparent ? { ...e, traceparent } : e)),
      );
      outbox = `,
         outbox AS (
           INSERT INTO ${this.schema}.outbox (global_position, topic, message_key, envelope)
           SELECT i.global_position, o.topic, i.stream_id,
                  o.envelope || jsonb_build_object('globalPosition', i.global_position::text)
             FROM inserted i
             JOIN unnest($${n - 3}::text[], $${n - 2}::text[], $${n - 1}::int[], $${n}::jsonb[])
                    AS o (topic, stream_id, stream_position, envelope)
               ON o.stream_id = i.stream_id AND o.stream_position = i.stream_position
            ORDER BY i.global_position)`;
    }
    // The positions of the read models kept in the caller's transaction (appendAndProject), moved here too.
    let moved = '';
    if (positions && positions.length > 0) {
      const n = params.push(
        positions.map((p) => p.projection),
        positions.map((p) => p.streamId),
        positions.map((p) => p.position),
      );
      moved = `,
         moved AS (
           INSERT INTO ${this.schema}.projection_stream_positions (projection, stream_id, position)
           SELECT s.projection, s.stream_id, s.position
             FROM unnest($${n - 2}::text[], $${n - 1}::text[], $${n}::int[]) WITH ORDINALITY AS s (projection, stream_id, position, n)
            WHERE EXISTS (SELECT 1 FROM inserted)
            ORDER BY s.n
           ON CONFLICT (projection, stream_id) DO UPDATE SET position = EXCLUDED.position)`;
    }
    let rows: { stream_position: number; global_position: string }[];
    try {
      // The chain head moves in the same statement: one round trip, as before the chain.
      rows = await sql.query<{ stream_position: number; global_position: string }>(
        `WITH inserted AS (
           INSERT INTO ${this.schema}.events
             (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at, hash)
           SELECT * FROM (VALUES ${values.join(', ')}) AS v${linked}
           RETURNING stream_id, stream_position, global_position),
         head AS (
           UPDATE ${this.schema}.event_chain_head
              SET hash = $1, global_position = (SELECT max(global_position) FROM inserted)
            WHERE id = 1 AND EXISTS (SELECT 1 FROM inserted))${outbox}${moved}
         SELECT stream_position, global_position::text AS global_position FROM inserted`,
        params,
      );
    } catch (error) {
      const code =
        (error as { code?: string; driverError?: { code?: string } }).code ??
        (error as { driverError?: { code?: string } }).driverError?.code;
      if (code === '23505') {
        // The stream the violated key names (its detail), else the first one.
        const detail = String(
          (error as { detail?: string }).detail ??
            (error as { driverError?: { detail?: string } }).driverError?.detail ??
            '',
        );
        const part = parts.find((p) => detail.includes(`(${p.streamId},`)) ?? parts[0]!;
        throw new WrongExpectedVersion(part.streamId, part.expectedVersion);
      }
      throw error;
    }
    if (rows.length === 0) return false;
    const global = new Map(rows.map((r) => [Number(r.stream_position), r.global_position]));
    for (const envelope of envelopes) envelope.globalPosition = global.get(envelope.streamPosition)!;
    return true;
  }
}
