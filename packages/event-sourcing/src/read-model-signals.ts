import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Sql } from './database';

/**
 * Read-model change signals: a process that keeps answers derived from read-model tables (a cache of a
 * query's answer) learns that a table changed as soon as the transaction that changed it commits.
 *
 * - Projections report the tables they changed (`readModelsChanged`, called by the projection runners in
 *   projections.ts: inline, subscribed and retried applies, rebuilds and replays). Inside a transaction of
 *   `Database.transaction` the report waits for the commit: this process's version of each table moves
 *   right after COMMIT returns, never before (a rolled-back transaction moves nothing).
 * - On PostgreSQL the same transaction also sends `NOTIFY rigmarket_read_models` (delivered at commit), and
 *   every process that watches tables keeps one `LISTEN` connection that moves the same versions when
 *   another process's change arrives. While that connection is down (not yet connected, lost, reconnecting)
 *   a watch's `version()` is null: nothing may be served from a cache or stored in it (fail safe), and every
 *   version moves when it comes back (notifications sent meanwhile are lost).
 * - The embedded database (PGlite) is one process: the versions alone suffice, and a watch is always live.
 *
 * How a cache uses a watch (`db.watchReadModels(tables)`): read `version()` before running the query; keep
 * the answer only if `version()` is still that same non-null number afterwards (a change that committed
 * meanwhile may or may not be in the answer); serve an entry only while `version()` equals the version it
 * was stored under. Another process sees a change once its NOTIFY arrived (milliseconds after the commit),
 * this process at once.
 */

/** The NOTIFY channel. Payload: the sending process's token, a space, the tables (comma-separated) or `*`. */
export const READ_MODEL_CHANNEL = 'rigmarket_read_models';

/** Versions of the tables (schema-qualified names) in this process; `everything` moves them all. */
const versions = new Map<string, number>();
let everything = 0;

/** This process's NOTIFYs come back to its own listener: it skips them (its versions moved at commit). */
const processToken = randomUUID();

/** Tables changed by transactions still open (their `Sql`), reported at commit. */
const pending = new WeakMap<Sql, Set<string>>();

function bump(tables: Iterable<string>): void {
  for (const table of tables) versions.set(table, (versions.get(table) ?? 0) + 1);
}

/**
 * Records that `tables` (schema-qualified, as in a projection's `tables`) changed in the transaction of
 * `sql`: their versions move when it commits (and, on PostgreSQL, other processes are told then). With an
 * `Sql` that is no transaction of `Database.transaction` (autocommit, a test's own runner) the statements
 * have already committed: the versions move at once.
 */
export function readModelsChanged(sql: Sql, tables: readonly string[]): void {
  const open = pending.get(sql);
  if (open) for (const table of tables) open.add(table);
  else bump(tables);
}

/** Database.transaction's side: the set its transaction's reports go to. */
export function openReadModelChanges(sql: Sql): Set<string> {
  const changed = new Set<string>();
  pending.set(sql, changed);
  return changed;
}

/** Database.transaction's side, after COMMIT: this process's versions move. */
export function readModelChangesCommitted(changed: ReadonlySet<string>): void {
  bump(changed);
}

/** The NOTIFY payload for a transaction's changed tables (NOTIFY takes at most 8,000 bytes: `*` beyond). */
export function readModelNotifyPayload(changed: ReadonlySet<string>): string {
  const payload = `${processToken} ${[...changed].join(',')}`;
  return Buffer.byteLength(payload) < 7_900 ? payload : `${processToken} *`;
}

function received(payload: string): void {
  const space = payload.indexOf(' ');
  if (space < 0 || payload.slice(0, space) === processToken) return;
  const tables = payload.slice(space + 1);
  if (tables === '*') everything += 1;
  else bump(tables.split(','));
}

/**
 * A set of tables whose changes a cache follows. `version()`: a number that moves whenever one of the
 * tables changes (or anything might have been missed), or null while changes could go unseen.
 */
export class ReadModelWatch {
  constructor(
    readonly tables: readonly string[],
    private readonly live: () => boolean = () => true,
  ) {}

  version(): number | null {
    if (!this.live()) return null;
    let version = everything;
    for (const table of this.tables) version += versions.get(table) ?? 0;
    return version;
  }
}

/** How long the listener waits before connecting again after losing its connection. */
export const LISTENER_RETRY_MS = 1000;

/**
 * The LISTEN connection of a process on PostgreSQL (one per `Database` that has watches): moves the
 * versions when another process's NOTIFY arrives; `connected` is false until LISTEN has succeeded and
 * again as soon as the connection fails, and it reconnects after LISTENER_RETRY_MS.
 */
export class ReadModelListener {
  private client: Client | undefined;
  private connectedNow = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly url: string) {
    void this.connect();
  }

  get connected(): boolean {
    return this.connectedNow;
  }

  /** Resolves once the listener is connected (at once if it is). */
  ready(): Promise<void> {
    if (this.connectedNow) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.connectedNow = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.url,
      application_name: 'rigmarket-read-model-listener',
    });
    client.on('notification', (message) => {
      if (message.channel === READ_MODEL_CHANNEL && message.payload) received(message.payload);
    });
    this.client = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${READ_MODEL_CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.closed || this.client !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    // Whatever changed before LISTEN took effect was not heard: every version moves.
    everything += 1;
    this.connectedNow = true;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    const wasConnected = this.connectedNow;
    this.connectedNow = false;
    this.client = undefined;
    if (wasConnected) everything += 1;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.closed) void this.connect();
    }, LISTENER_RETRY_MS);
    this.retry.unref();
  }
}
