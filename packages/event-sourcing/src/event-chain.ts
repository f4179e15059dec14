import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';
import type { Sql } from './database';
import type { EventRow } from './event-store';
import type { Migration } from './migrations';

/**
 * The hash chain over one context's events (docs/architecture.md, "Tamper-evident event store"). Each
 * event's `hash` is sha256 over the previous event's hash (in global position order within the context)
 * and the event's canonical content, so editing, deleting or reordering a stored row breaks every link
 * from it on. The first event links to GENESIS_HASH.
 */
export const GENESIS_HASH = '0'.repeat(64);

/** The hashed content of one event: every column a reader folds, none of the bookkeeping ones. */
export interface ChainedContent {
  eventId: string;
  streamId: string;
  streamType: string;
  streamPosition: number;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: unknown;
  /** UTC with microseconds, `YYYY-MM-DDTHH:MM:SS.ffffffZ` (chainTime). */
  occurredAt: string;
}

/** A timestamp as the chain hashes it: UTC, always six fractional digits (PostgreSQL's precision). */
export function chainTime(at: Date | string): string {
  if (typeof at === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at)) return at;
  return new Date(at).toISOString().replace(/Z$/, '000Z');
}

/** The SQL expression for `occurred_at` in chainTime's form (microseconds kept). */
export const CHAIN_TIME_SQL = `to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * sha256 (hex) of `previous` + "\n" + the RFC 8785 (JCS) canonical JSON of the content: an auditor
 * recomputes it with any JCS implementation and sha256sum.
 */
export function eventHash(previous: string, content: ChainedContent): string {
  const canonical = canonicalize({
    eventId: content.eventId,
    streamId: content.streamId,
    streamType: content.streamType,
    streamPosition: content.streamPosition,
    type: content.type,
    schemaVersion: content.schemaVersion,
    data: content.data,
    metadata: content.metadata,
    occurredAt: content.occurredAt,
  });
  return createHash('sha256').update(previous).update('\n').update(canonical).digest('hex');
}

/** A stored event as the chain reads it back (chainRows). */
export interface ChainRow extends ChainedContent {
  globalPosition: string;
  hash: string;
}

interface RawChainRow extends Omit<EventRow, 'occurred_at'> {
  /** CHAIN_TIME_SQL */
  occurred_at: string;
  hash: string | null;
}

const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/**
 * Every stored event of a schema in global position order, `batch` rows per query (keyset pages), so a
 * store of any size is walked in bounded memory.
 */
export async function* chainRows(sql: Sql, schema: string, batch = 1000): AsyncGenerator<ChainRow> {
  let after = '0';
  for (;;) {
    const rows = await sql.query<RawChainRow>(
      `SELECT global_position::text AS global_position, event_id, stream_id, stream_type, stream_position, type,
              schema_version, data::text AS data, metadata::text AS metadata, ${CHAIN_TIME_SQL} AS occurred_at, hash
         FROM ${schema}.events WHERE global_position > $1::bigint ORDER BY events.global_position LIMIT $2`,
      [after, batch],
    );
    for (const r of rows)
      yield {
        globalPosition: r.global_position,
        eventId: r.event_id,
        streamId: r.stream_id,
        streamType: r.stream_type,
        streamPosition: Number(r.stream_position),
        type: r.type,
        schemaVersion: Number(r.schema_version),
        data: parsed(r.data),
        metadata: parsed(r.metadata),
        occurredAt: r.occurred_at,
        hash: r.hash ?? '',
      };
    if (rows.length < batch) return;
    after = rows[rows.length - 1]!.global_position;
  }
}

/** Where a chain first fails to link: the row, the hash it should carry and the one it does. */
export interface BrokenLink {
  globalPosition: string;
  streamId: string;
  streamPosition: number;
  expected: string;
  found: string;
}

export interface ChainReport {
  events: number;
  /** The last event's stored hash (GENESIS_HASH for an empty store): the value to publish. */
  head: string;
  /** The chain-head row the next append links to; absent on a store without it. */
  recordedHead?: { hash: string; globalPosition: string };
  broken?: BrokenLink;
}

/**
 * Walks a schema's events in global position order, recomputing each hash from the previous stored one,
 * and compares the last one with the chain-head row. Stops at the first broken link.
 */
export async function verifyChain(sql: Sql, schema: string): Promise<ChainReport> {
  let previous = GENESIS_HASH;
  let events = 0;
  let last: ChainRow | undefined;
  for await (const row of chainRows(sql, schema)) {
    const expected = eventHash(previous, row);
    if (expected !== row.hash)
      return {
        events,
        head: previous,
        broken: {
          globalPosition: row.globalPosition,
          streamId: row.streamId,
          streamPosition: row.streamPosition,
          expected,
          found: row.hash || '(none)',
        },
      };
    previous = row.hash;
    last = row;
    events += 1;
  }
  const [recorded] = await sql.query<{ hash: string; global_position: string }>(
    `SELECT hash, global_position::text AS global_position FROM ${schema}.event_chain_head WHERE id = 1`,
  );
  const report: ChainReport = {
    events,
    head: previous,
    recordedHead: recorded && { hash: recorded.hash, globalPosition: recorded.global_position },
  };
  // Deleting the newest events leaves a chain that links: the head row, moved only by appends, tells.
  if (!recorded || recorded.hash !== previous)
    report.broken = {
      globalPosition: recorded?.global_position ?? '0',
      streamId: last?.streamId ?? '(head)',
      streamPosition: last?.streamPosition ?? 0,
      expected: recorded?.hash ?? '(no chain head row)',
      found: previous,
    };
  return report;
}

/**
 * Locks the context's chain head for the rest of the transaction and answers the hash to link to: every
 * appending transaction of a context takes it before inserting, so appends (from any process) are
 * chained one transaction after another, in global position order.
 */
export async function lockChainHead(sql: Sql, schema: string): Promise<string> {
  const [row] = await sql.query<{ hash: string }>(
    `SELECT hash FROM ${schema}.event_chain_head WHERE id = 1 FOR UPDATE`,
  );
  if (!row) throw new Error(`${schema}.event_chain_head has no row: run the migrations`);
  return row.hash;
}

/**
 * Adds the chain to a context's store: a `hash` per event and the chain-head row appends lock. Events
 * stored before it are chained here, in global position order, in pages (bounded memory); the ALTER TABLE
 * holds appends off until the migration commits.
 */
export const eventChainMigration: Migration = {
  id: 'core-0005-event-chain',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.events ADD COLUMN hash TEXT`);
    await sql.execute(`
      CREATE TABLE ${s}.event_chain_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        global_position BIGINT NOT NULL,
        hash TEXT NOT NULL
      )`);
    let previous = GENESIS_HASH;
    let lastPosition = '0';
    let page: Array<{ gp: string; hash: string }> = [];
    const flush = async () => {
      if (page.length === 0) return;
      await sql.execute(
        `UPDATE ${s}.events e SET hash = v.hash
           FROM jsonb_to_recordset($1::jsonb) AS v(gp BIGINT, hash TEXT) WHERE e.global_position = v.gp`,
        [JSON.stringify(page)],
      );
      page = [];
    };
    for await (const row of chainRows(sql, s)) {
      previous = eventHash(previous, row);
      lastPosition = row.globalPosition;
      page.push({ gp: row.globalPosition, hash: previous });
      if (page.length >= 1000) await flush();
    }
    await flush();
    await sql.execute(`ALTER TABLE ${s}.events ALTER COLUMN hash SET NOT NULL`);
    await sql.execute(
      `INSERT INTO ${s}.event_chain_head (id, global_position, hash) VALUES (1, $1::bigint, $2)`,
      [lastPosition, previous],
    );
  },
};
