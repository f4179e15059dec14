import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import {
  type ChainRow,
  type ContextDefinition,
  type Database,
  GENESIS_HASH,
  type Sql,
  chainRows,
  contextProjections,
  eventHash,
  migrateContexts,
} from '@rigmarket/event-sourcing';
import { VERIFY_CHECKS, rebuildAll, verify, verifyChains } from './verify';
import { NO_PROGRESS, type Progress } from './operator-output';

/**
 * `rigmarket export` / `rigmarket import` (docs/operations.md): every context's events as NDJSON, in one
 * file. Line 1 is the header; then, context after context, one line per event in global position order
 * (its columns and chain hash), one line per row of the context's carried tables (`{context, table, row}`:
 * state beside the events that no projection rebuilds), one per id sequence (`{context, sequence, value}`),
 * and a closing line with the context's event count and head hash.
 */
export const EXPORT_FORMAT = 'rigmarket-events/1';
/** A longer line is refused on import (bounded input): far above any event the platform stores. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
const INSERT_ROWS = 500;

interface Header {
  format: string;
  contexts: string[];
}
type EventLine = { context: string } & ChainRow;
/** A row of a carried table, as PostgreSQL's to_jsonb gives it (loaded back with jsonb_populate_record). */
interface TableLine {
  context: string;
  table: string;
  row: Record<string, unknown>;
}
/** Where an id sequence of the context's schema stands (its last value handed out). */
interface SequenceLine {
  context: string;
  sequence: string;
  value: string;
}
interface HeadLine {
  context: string;
  head: string;
  events: number;
}

export interface ContextSummary {
  context: string;
  events: number;
  head: string;
}

async function writeLine(out: Writable, value: unknown): Promise<void> {
  if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, 'drain');
}

async function eventsPresent(sql: Sql, schema: string): Promise<boolean> {
  const [row] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
    `${schema}.events`,
  ]);
  return row?.found === true;
}

/**
 * Writes every context's events to `out`, all read in one REPEATABLE READ snapshot, a page at a time.
 * The chain is checked on the way: a store whose chain is broken is not exported (the error names the
 * link).
 */
export async function exportEvents(
  db: Database,
  contexts: readonly ContextDefinition[],
  out: Writable,
  progress: Progress = NO_PROGRESS,
): Promise<ContextSummary[]> {
  return db.transaction(async (sql) => {
    await sql.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const present: ContextDefinition[] = [];
    for (const c of contexts) if (await eventsPresent(sql, CONTEXT_SCHEMAS[c.context])) present.push(c);
    let total = 0;
    for (const c of present) {
      const [row] = await sql.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM ${CONTEXT_SCHEMAS[c.context]}.events`,
      );
      total += Number(row?.n ?? 0);
    }
    progress.phase('export', total);
    const header: Header = { format: EXPORT_FORMAT, contexts: present.map((c) => c.context) };
    await writeLine(out, header);
    const summaries: ContextSummary[] = [];
    for (const c of present) {
      let previous = GENESIS_HASH;
      let events = 0;
      for await (const row of chainRows(sql, CONTEXT_SCHEMAS[c.context])) {
        if (eventHash(previous, row) !== row.hash)
          throw new Error(
            `${c.context}: the chain is broken at global position ${row.globalPosition} (stream ${row.streamId}); ` +
              'run rigmarket verify --chain',
          );
        previous = row.hash;
        events += 1;
        await writeLine(out, { context: c.context, ...row });
        progress.step();
      }
      await writeCarried(sql, c, out);
      const head: HeadLine = { context: c.context, head: previous, events };
      await writeLine(out, head);
      summaries.push(head);
    }
    return summaries;
  });
}

/** The sequence behind `events.global_position`: the import sets it from the events themselves. */
const EVENTS_SEQUENCE = 'events_global_position_seq';

/** The context's id sequences that handed out a value, by name. */
async function sequencesOf(sql: Sql, schema: string): Promise<Array<{ name: string; value: string }>> {
  return sql.query<{ name: string; value: string }>(
    `SELECT sequencename AS name, last_value::text AS value FROM pg_sequences
      WHERE schemaname = $1 AND last_value IS NOT NULL AND sequencename <> $2 ORDER BY sequencename`,
    [schema, EVENTS_SEQUENCE],
  );
}

/** The rows of the context's carried tables (in their key order) and where its id sequences stand. */
async function writeCarried(sql: Sql, c: ContextDefinition, out: Writable): Promise<void> {
  const schema = CONTEXT_SCHEMAS[c.context];
  for (const { table, orderBy } of c.carriedTables ?? []) {
    const rows = await sql.query<{ row: string }>(
      `SELECT to_jsonb(t)::text AS row FROM ${schema}.${table} t ORDER BY ${orderBy}`,
    );
    for (const { row } of rows) {
      const line: TableLine = { context: c.context, table, row: JSON.parse(row) as Record<string, unknown> };
      await writeLine(out, line);
    }
  }
  for (const { name, value } of await sequencesOf(sql, schema)) {
    const line: SequenceLine = { context: c.context, sequence: name, value };
    await writeLine(out, line);
  }
}

/** Loads one carried row or sequence line of `definition`'s context (names checked against the definition). */
async function loadCarried(
  sql: Sql,
  definition: ContextDefinition,
  value: Record<string, unknown>,
  number: number,
): Promise<void> {
  const schema = CONTEXT_SCHEMAS[definition.context];
  if ('table' in value) {
    const table = (definition.carriedTables ?? []).find((t) => t.table === value.table)?.table;
    if (!table)
      throw new Error(`line ${number}: ${String(value.table)} is not a table ${definition.context} carries`);
    if (!value.row || typeof value.row !== 'object' || Array.isArray(value.row))
      throw new Error(`line ${number}: row is not a JSON object`);
    await sql.execute(
      `INSERT INTO ${schema}.${table} SELECT * FROM jsonb_populate_record(NULL::${schema}.${table}, $1::jsonb)`,
      [JSON.stringify(value.row)],
    );
    return;
  }
  const known = new Set(
    (
      await sql.query<{ name: string }>(
        `SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1 AND sequencename <> $2`,
        [schema, EVENTS_SEQUENCE],
      )
    ).map((r) => r.name),
  );
  if (typeof value.sequence !== 'string' || !known.has(value.sequence))
    throw new Error(`line ${number}: ${String(value.sequence)} is not a sequence of ${definition.context}`);
  if (typeof value.value !== 'string' || !/^-?\d{1,19}$/.test(value.value))
    throw new Error(`line ${number}: the value of ${value.sequence} is not an integer`);
  await sql.query(`SELECT setval($1::regclass, $2::bigint)`, [`${schema}.${value.sequence}`, value.value]);
}

function parseLine(line: string, number: number): Record<string, unknown> {
  if (line.length > MAX_LINE_CHARS)
    throw new Error(`line ${number}: longer than ${MAX_LINE_CHARS} characters`);
  try {
    const value: unknown = JSON.parse(line);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`line ${number}: not a JSON object`);
}

function asEvent(value: Record<string, unknown>, number: number): EventLine {
  const strings = [
    'context',
    'globalPosition',
    'eventId',
    'streamId',
    'streamType',
    'type',
    'occurredAt',
    'hash',
  ];
  for (const key of strings)
    if (typeof value[key] !== 'string') throw new Error(`line ${number}: ${key} is not a string`);
  for (const key of ['streamPosition', 'schemaVersion'])
    if (!Number.isInteger(value[key])) throw new Error(`line ${number}: ${key} is not an integer`);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(value.occurredAt as string))
    throw new Error(`line ${number}: occurredAt is not YYYY-MM-DDTHH:MM:SS.ffffffZ`);
  if (!/^[1-9]\d{0,18}$/.test(value.globalPosition as string))
    throw new Error(`line ${number}: globalPosition is not a positive integer`);
  if (!('data' in value) || !('metadata' in value))
    throw new Error(`line ${number}: data or metadata missing`);
  return value as unknown as EventLine;
}

async function insertRows(sql: Sql, schema: string, rows: EventLine[]): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = [];
  const values = rows.map((r) => {
    const n = params.push(
      r.globalPosition,
      r.eventId,
      r.streamId,
      r.streamType,
      r.streamPosition,
      r.type,
      r.schemaVersion,
      JSON.stringify(r.data),
      JSON.stringify(r.metadata),
      r.occurredAt,
      r.hash,
    );
    return `(${Array.from({ length: 11 }, (_, i) => `$${n - 10 + i}`).join(', ')})`;
  });
  await sql.execute(
    `INSERT INTO ${schema}.events
       (global_position, event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at, hash)
     VALUES ${values.join(', ')}`,
    params,
  );
}

/** Refuses unless no context of this deployment has an event (a fresh, migrated deployment). */
async function refuseNonEmpty(db: Database, contexts: readonly ContextDefinition[]): Promise<void> {
  for (const c of contexts) {
    const [row] = await db.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${CONTEXT_SCHEMAS[c.context]}.events) AS any`,
    );
    if (row?.any)
      throw new Error(
        `the target is not empty: ${c.context} has events (import loads into an empty deployment only)`,
      );
  }
}

/**
 * Loads an export into an empty deployment, in one transaction: every event keeps its global position
 * and hash, each context's chain is recomputed line by line and must end on the head the file states
 * (a tampered, reordered or truncated file is refused, nothing loaded). Events, the carried tables' rows
 * and the id sequences are loaded (the rows are not on the chain: only the file's integrity as a whole
 * vouches for them); the outbox, reactor queue and dead letters start empty.
 */
export async function importEvents(
  db: Database,
  contexts: readonly ContextDefinition[],
  input: Readable,
): Promise<ContextSummary[]> {
  await migrateContexts(db, contexts);
  await refuseNonEmpty(db, contexts);
  const known = new Map(contexts.map((c) => [c.context as string, CONTEXT_SCHEMAS[c.context]]));
  const definitions = new Map(contexts.map((c) => [c.context as string, c]));
  return db.transaction(async (sql) => {
    const summaries: ContextSummary[] = [];
    let header: Header | undefined;
    let open: { context: string; schema: string; previous: string; events: number; last: bigint } | undefined;
    let batch: EventLine[] = [];
    const done = new Set<string>();
    let number = 0;
    const lines = createInterface({ input, crlfDelay: Infinity });
    for await (const line of lines) {
      number += 1;
      if (line.trim() === '') continue;
      const value = parseLine(line, number);
      if (!header) {
        if (value.format !== EXPORT_FORMAT || !Array.isArray(value.contexts))
          throw new Error(`line ${number}: not a ${EXPORT_FORMAT} export (no header)`);
        header = value as unknown as Header;
        continue;
      }
      const context = value.context;
      if (typeof context !== 'string' || !known.has(context))
        throw new Error(`line ${number}: context ${String(context)} is not one of this deployment's`);
      if (!open) {
        if (done.has(context)) throw new Error(`line ${number}: context ${context} appears twice`);
        open = { context, schema: known.get(context)!, previous: GENESIS_HASH, events: 0, last: 0n };
      } else if (open.context !== context)
        throw new Error(`line ${number}: ${context} begins before ${open.context}'s closing line`);
      if ('head' in value) {
        await insertRows(sql, open.schema, batch);
        batch = [];
        if (value.head !== open.previous || value.events !== open.events)
          throw new Error(
            `line ${number}: ${context} ends at head ${open.previous} after ${open.events} event(s); the file says ` +
              `${String(value.head)} after ${String(value.events)} (events missing or added)`,
          );
        await sql.execute(
          `UPDATE ${open.schema}.event_chain_head SET hash = $1, global_position = $2 WHERE id = 1`,
          [open.previous, open.last.toString()],
        );
        if (open.events > 0)
          await sql.query(`SELECT setval(pg_get_serial_sequence($1, 'global_position'), $2::bigint)`, [
            `${open.schema}.events`,
            open.last.toString(),
          ]);
        summaries.push({ context, events: open.events, head: open.previous });
        done.add(context);
        open = undefined;
        continue;
      }
      if ('table' in value || 'sequence' in value) {
        await insertRows(sql, open.schema, batch);
        batch = [];
        await loadCarried(sql, definitions.get(context)!, value, number);
        continue;
      }
      const event = asEvent(value, number);
      const position = BigInt(event.globalPosition);
      if (position <= open.last) throw new Error(`line ${number}: global position ${position} out of order`);
      const expected = eventHash(open.previous, event);
      if (expected !== event.hash)
        throw new Error(
          `line ${number}: ${context}'s chain is broken at global position ${event.globalPosition} ` +
            `(stream ${event.streamId}): expected ${expected}, found ${event.hash}`,
        );
      open.previous = event.hash;
      open.events += 1;
      open.last = position;
      batch.push(event);
      if (batch.length >= INSERT_ROWS) {
        await insertRows(sql, open.schema, batch);
        batch = [];
      }
    }
    if (!header) throw new Error('the file is empty');
    if (open) throw new Error(`the file ends inside ${open.context} (no closing line): truncated`);
    const missing = header.contexts.filter((c) => !done.has(c));
    if (missing.length) throw new Error(`the file ends before ${missing.join(', ')} (truncated)`);
    return summaries;
  });
}

/**
 * `rigmarket import`: loads the file, rebuilds every read model from the loaded events, then checks
 * the result as `rigmarket verify` and `verify --chain` do. Answers whether everything held.
 */
export async function importAndRebuild(
  db: Database,
  contexts: readonly ContextDefinition[],
  input: Readable,
  write: (line: string) => void,
  progress: Progress = NO_PROGRESS,
): Promise<boolean> {
  const summaries = await importEvents(db, contexts, input);
  for (const s of summaries) write(`imported ${s.context}: ${s.events} event(s), head ${s.head}`);
  const targets = contexts.flatMap((c) => contextProjections(c).map((p) => ({ c, p })));
  const failed = await rebuildAll(db, targets, write, undefined, progress);
  const chains = await verifyChains(db, contexts, write, progress);
  write(chains.ok ? 'verify --chain: ok' : 'verify --chain: BROKEN');
  const models = await verify(db, contexts, write, VERIFY_CHECKS, progress);
  write(models.ok ? 'verify: ok' : 'verify: DIFFERENCES FOUND');
  return failed === 0 && chains.ok && models.ok;
}
