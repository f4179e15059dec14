import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite, type PGliteOptions, types } from '@electric-sql/pglite';
import * as pg from 'pg';
import { serialize } from 'pg-protocol';
import { unpackCluster } from './cluster-archive';

/**
 * A `pg`-compatible Pool over one PGlite instance for TypeORM's postgres driver.
 *
 * PGlite has a single connection. typeorm-pglite's pool lets every query runner use it at once, so two
 * transactions interleave their BEGIN/COMMIT on one session and mix their statements. This pool hands
 * the connection out exclusively: `connect` waits until the previous holder released it, so each
 * TypeORM QueryRunner (and thus each transaction) has the session to itself.
 */
const instances = new Map<string, Promise<PGlite>>();

type Parser = PGlite['parsers'][number];

// Same shapes as node-postgres: int8/numeric as strings, so both modes return equal rows.
const PARSERS: Record<number, Parser> = { [types.INT8]: (v: string) => v, [types.NUMERIC]: (v: string) => v };

/** Each instance's parsers of array types, which its results are parsed with here (slimParsers). */
const arrayParsers = new WeakMap<PGlite, Map<number, Parser>>();

/**
 * PGlite's table of parsers holds one per array type of the catalog (~300 entries), and its own result
 * parsing copied the whole table for every result (~0.1 ms of CPU per statement). The table it keeps holds
 * the scalar parsers only (its defaults and ours); the array types' parsers PGlite built are kept beside it,
 * and a result's columns are parsed with either (lastResult), so every value comes back as before.
 */
function slimParsers(db: PGlite): PGlite {
  const scalar: Record<string, Parser> = {};
  const arrays = new Map<number, Parser>();
  for (const [key, parser] of Object.entries(db.parsers)) {
    if (key in types.parsers || key in PARSERS) scalar[key] = parser;
    else arrays.set(Number(key), parser);
  }
  // An array parser looks its element's parser up in db.parsers when it runs: those are all kept.
  db.parsers = scalar;
  arrayParsers.set(db, arrays);
  return db;
}

/**
 * The database the platform's tables live in. PGlite 0.3 ran every session in `template1`, so folders it
 * created hold their tables there; PGlite 0.4 connects to `postgres` unless told otherwise (an existing folder
 * would then look empty). Every folder, whichever version created it, is therefore opened on `template1`.
 */
export const PGLITE_DATABASE = 'template1';

/**
 * PGlite's own start parameters plus smaller memory settings: PostgreSQL's default shared buffers (128 MB)
 * are all touched in the WebAssembly heap, which never shrinks; one session over a few hundred MB of data needs
 * far less. 8 MB rather than 16: ~10 MB less resident, and offer search over 100,000 offers on disk no slower
 * (a scan larger than a quarter of the buffers reads through a small ring of them either way). Measured in
 * docs/benchmarks.md ("Memory", "Embedded memory under load").
 */
export const PGLITE_START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=8MB',
];

const pgliteOptions = () => ({ database: PGLITE_DATABASE, startParams: [...PGLITE_START_PARAMS] });

/**
 * Creates the cluster of an empty data folder in a short-lived child process. PGlite 0.4 runs initdb in a
 * WebAssembly module and a second PGlite instance of their own, whose memory (some hundreds of MB) a
 * long-running process would keep: the cluster is made in a staging folder by a child that then exits, and
 * moved into place (a start killed meanwhile leaves no half-made cluster in use). A missing folder is made
 * beside it and renamed into place. A folder that exists (empty) is kept: a volume mounted there cannot be
 * replaced, nor a folder the operator made in a parent this process may not write. The cluster is then
 * made in a staging folder inside it and its entries moved up, PG_VERSION (the mark of a whole cluster) last;
 * `removeAbandonedStaging` clears what a start killed midway left. A kept cluster (the caller's
 * `firstCluster`, else the build's fresh one: `builtFreshCluster`) is unpacked into the staging folder by this
 * process instead (`unpackCluster`: no engine started for it), and the child runs initdb only when there is
 * none, or none unpacks.
 */
async function makeCluster(dataDir: string, firstCluster: string | undefined): Promise<void> {
  const inPlace = existsSync(dataDir);
  const staging = inPlace
    ? join(dataDir, `${STAGING_PREFIX}${process.pid}`)
    : `${dataDir}${STAGING_PREFIX}${process.pid}`;
  const script = [
    'const { PGlite } = require(process.argv[1]);',
    'const options = JSON.parse(process.argv[3]);',
    'PGlite.create({ ...options, dataDir: process.argv[2] }).then((db) => db.close()).catch((error) => {',
    '  console.error(error);',
    '  process.exit(1);',
    '});',
  ].join('\n');
  const initdb = () =>
    promisify(execFile)(
      process.execPath,
      ['-e', script, require.resolve('@electric-sql/pglite'), staging, JSON.stringify(pgliteOptions())],
      { maxBuffer: 1024 * 1024 },
    );
  // The caller's cluster, else the build's fresh one, else initdb.
  const copies = [firstCluster, builtFreshCluster()].filter((c) => c !== undefined);
  try {
    let unpacked = false;
    for (const copy of copies) {
      try {
        await unpackCluster(copy, staging);
        unpacked = true;
        break;
      } catch {
        // A kept cluster that does not unpack (damaged: cut short, not a cluster) does not stop a first start:
        // nothing half unpacked is used, and the next way makes the cluster instead.
        rmSync(staging, { recursive: true, force: true });
      }
    }
    if (!unpacked) await initdb();
    if (inPlace) {
      const entries = readdirSync(staging).filter((name) => name !== 'PG_VERSION');
      for (const name of [...entries, 'PG_VERSION']) renameSync(join(staging, name), join(dataDir, name));
    } else {
      renameSync(staging, dataDir);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

const STAGING_PREFIX = '.initdb-';

/**
 * The staging folders of first starts that ended before moving theirs into place (killed, or the machine
 * stopped): this process's own and those of processes no longer running; a running one's is left alone.
 * Beside `dataDir` (`<name>.initdb-<pid>`), a staging folder is removed. Inside it (`.initdb-<pid>`, a
 * folder that existed empty), one left with PG_VERSION already moved up is removed; one left before that
 * means the folder holds only part of a cluster, all of it that start's: the folder is emptied again.
 */
function removeAbandonedStaging(dataDir: string): void {
  const abandoned = (folder: string, prefix: string): string[] => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return [];
    }
    return names.filter((name) => {
      if (!name.startsWith(prefix)) return false;
      const pid = Number(name.slice(prefix.length));
      return Number.isSafeInteger(pid) && pid > 0 && (pid === process.pid || !isRunning(pid));
    });
  };
  const beside = dirname(dataDir);
  for (const name of abandoned(beside, `${basename(dataDir)}${STAGING_PREFIX}`))
    rmSync(join(beside, name), { recursive: true, force: true });
  const inside = abandoned(dataDir, STAGING_PREFIX);
  if (inside.length === 0) return;
  const cutShort = !existsSync(join(dataDir, 'PG_VERSION'));
  for (const name of cutShort ? readdirSync(dataDir) : inside)
    rmSync(join(dataDir, name), { recursive: true, force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A folder that PGlite would initialise: missing, or empty (a cluster has PG_VERSION). */
function needsInitdb(dataDir: string): boolean {
  if (!existsSync(dataDir)) return true;
  return readdirSync(dataDir).length === 0;
}

/**
 * A name for a fresh cluster of this PGlite release and these options: a copy made by another release, or with
 * other settings, is never loaded.
 */
export function freshClusterKey(): string {
  const home = dirname(require.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(readFileSync(join(home, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const wasm = statSync(join(home, 'pglite.wasm'));
  return createHash('sha256')
    .update(JSON.stringify([version, wasm.size, pgliteOptions()]))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The fresh cluster `npm run build` keeps beside this module (scripts/write-fresh-cluster.js): a first start
 * unpacks it (~1 s) instead of running initdb (~4 s of CPU with PGlite 0.4). Undefined when the build made
 * none for this release and these options (the child then runs initdb).
 */
export function builtFreshClusterPath(): string {
  return join(__dirname, `pglite-cluster-${freshClusterKey()}.tar.gz`);
}

function builtFreshCluster(): string | undefined {
  const path = builtFreshClusterPath();
  return existsSync(path) ? path : undefined;
}

/**
 * A build keeps one copy of a cluster per family (`family` matches the file names): removes the others in
 * `path`'s folder (made for another PGlite release, other settings or other migrations) and answers whether
 * `path` itself is there already.
 */
export function keepOnlyCopy(path: string, family: RegExp): boolean {
  const folder = dirname(path);
  for (const name of readdirSync(folder))
    if (family.test(name) && name !== basename(path)) rmSync(join(folder, name));
  return existsSync(path);
}

/** Writes a fresh cluster of this PGlite release and these options, gzipped, where a first start looks for it. */
export async function writeBuiltFreshCluster(): Promise<string> {
  const path = builtFreshClusterPath();
  const db = await PGlite.create(pgliteOptions());
  try {
    await writeGzippedCluster(db, path);
  } finally {
    await db.close();
  }
  return path;
}

/**
 * Writes the cluster of `dataDir`'s open engine to `path`, gzipped (what `firstCluster` and the build's
 * fresh cluster are): e.g. an in-memory database after its migrations.
 */
export async function saveCluster(dataDir: string, path: string): Promise<void> {
  await writeGzippedCluster(await pgliteInstance(dataDir), path);
}

/** Dumps the engine's cluster, gzipped; written beside `path` and renamed, so a reader never sees half a file. */
async function writeGzippedCluster(db: PGlite, path: string): Promise<void> {
  const tar = await db.dumpDataDir('gzip');
  writeFileSync(`${path}.${process.pid}`, Buffer.from(await tar.arrayBuffer()));
  renameSync(`${path}.${process.pid}`, path);
}

/**
 * In-memory databases (tests, test tools) start from a copy of a fresh cluster instead of running initdb each
 * time (~4 s of CPU with PGlite 0.4, ~0.5 s from the copy): the first one on a machine dumps its new cluster
 * to the OS temporary folder, under a name of this PGlite build, these options and this user; later ones load
 * it. A copy that is not this user's, is writable by others or does not load is ignored.
 */
function freshClusterPath(): string {
  return join(tmpdir(), `rigmarket-pglite-cluster-${process.getuid?.() ?? 0}-${freshClusterKey()}.tar`);
}

function readFreshCluster(path: string): Blob | undefined {
  try {
    const stat = statSync(path);
    if (stat.uid !== (process.getuid?.() ?? stat.uid) || (stat.mode & 0o022) !== 0) return undefined;
    return new Blob([readFileSync(path)]);
  } catch {
    return undefined;
  }
}

async function keepFreshCluster(db: PGlite, path: string): Promise<void> {
  const staging = `${path}.${process.pid}`;
  try {
    const tar = await db.dumpDataDir('none');
    writeFileSync(staging, Buffer.from(await tar.arrayBuffer()), { mode: 0o600 });
    renameSync(staging, path);
  } catch {
    rmSync(staging, { force: true });
  }
}

async function createInMemory(options: PGliteOptions): Promise<PGlite> {
  const path = freshClusterPath();
  const copy = readFreshCluster(path);
  if (copy) {
    const loaded = await PGlite.create({ ...options, loadDataDir: copy }).catch(() => undefined);
    if (loaded) return loaded;
  }
  const db = await PGlite.create(options);
  await keepFreshCluster(db, path);
  return db;
}

async function openPglite(dataDir: string, firstCluster: string | undefined): Promise<PGlite> {
  const inMemory = dataDir === 'memory://';
  if (!inMemory) {
    removeAbandonedStaging(dataDir);
    if (needsInitdb(dataDir)) await makeCluster(dataDir, firstCluster);
  }
  const create = inMemory ? createInMemory : (options: PGliteOptions) => PGlite.create(options);
  const db = await create({
    ...pgliteOptions(),
    dataDir: inMemory ? undefined : dataDir,
    parsers: PARSERS,
    serializers: {
      [types.BOOL]: (v: unknown) =>
        v === true || v === 'true' || v === 1
          ? 'TRUE'
          : v === false || v === 'false' || v === 0
            ? 'FALSE'
            : String(v),
    },
  });
  watchSwallowedTraps(db);
  return slimParsers(db);
}

/**
 * The engine of `dataDir`, opened on first use. `firstCluster`: a gzipped cluster (PGlite's `dumpDataDir`) an
 * empty folder starts from instead of the build's fresh one (e.g. one with the platform's migrations applied);
 * a folder that holds a cluster ignores it.
 */
export function pgliteInstance(dataDir: string, firstCluster?: string): Promise<PGlite> {
  let instance = instances.get(dataDir);
  if (!instance) {
    instance = openPglite(dataDir, firstCluster);
    instances.set(dataDir, instance);
  }
  return instance;
}

export async function closePglite(dataDir: string): Promise<void> {
  const instance = instances.get(dataDir);
  if (!instance) return;
  instances.delete(dataDir);
  faulted.delete(dataDir);
  await (await instance).close();
}

interface PgLikeResult {
  rows: unknown[];
  rowCount: number;
  command: string;
}

class ExclusiveLock {
  private tail: Promise<void> = Promise.resolve();
  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return acquired;
  }
}

const locks = new Map<string, ExclusiveLock>();

function commandOf(sql: string): string {
  const match = /^\s*(\w+)/.exec(sql);
  return match?.[1]?.toUpperCase() ?? '';
}

/**
 * Resolves on the next turn of the event loop, after pending I/O and timers. PGlite runs in this thread and
 * answers a query without any real I/O, so a chain of awaited queries (a billing run, a reactor drain, a
 * rebuild) would otherwise run as one long task: no HTTP request or timer would be served until it ended.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A WebAssembly trap inside PGlite (out-of-bounds access, `unreachable`: e.g. a stack overflow in its jsonb
 * parser) leaves the engine's memory in an unknown state: every later query fails or returns garbage. Such a
 * process cannot serve any more; it must end so that a supervisor restarts it. The process entry
 * (servePlatform) registers a handler that exits; without one (tests) the fault only fails every later query.
 */
export class DatabaseFaultError extends Error {
  constructor(readonly fault: unknown) {
    super(`The embedded database engine faulted (${String(fault)}); the process must restart`);
    this.name = 'DatabaseFaultError';
  }
}

const faultHandlers = new Set<(error: DatabaseFaultError) => void>();
const faulted = new Map<string, DatabaseFaultError>();

/** Calls `handler` when an embedded database engine faults (see DatabaseFaultError). Returns an unsubscribe. */
export function onDatabaseFault(handler: (error: DatabaseFaultError) => void): () => void {
  faultHandlers.add(handler);
  return () => faultHandlers.delete(handler);
}

function isWasmTrap(error: unknown): boolean {
  return (
    (error instanceof Error && error.name === 'RuntimeError') ||
    (error instanceof Error && /^RuntimeError: /.test(error.message))
  );
}

/**
 * An error the engine answers only once it is unusable: PostgreSQL's PANIC (e.g. "ERRORDATA_STACK_SIZE
 * exceeded") and FATAL (the session ended) severities. A single-user engine has no other session to go on
 * with: after either, PGlite 0.4 answers every later statement with an empty result, writes included.
 */
function leavesEngineUnusable(error: unknown): boolean {
  const severity = (error as { severity?: unknown } | null)?.severity;
  return severity === 'PANIC' || severity === 'FATAL';
}

/**
 * The traps PGlite swallows. Its main loop catches whatever a step of the engine throws and goes on; only its
 * own longjmp is expected there. A WebAssembly trap or a stack overflow (an infinitely recursive plpgsql
 * function: RangeError, then "memory access out of bounds") is lost that way: the statement answers an empty
 * result and the engine is broken. Each instance's step is wrapped once so that such a throw is kept here and
 * read after the statement (PgliteClient.query). PGlite keeps the module in a protected field; without it (a
 * later release) only the errors above are seen.
 */
const swallowedTraps = new WeakMap<PGlite, unknown>();

function watchSwallowedTraps(db: PGlite): void {
  const mod = (db as unknown as { mod?: { _PostgresMainLoopOnce?: () => void } }).mod;
  const step = mod?._PostgresMainLoopOnce;
  if (!mod || typeof step !== 'function') return;
  mod._PostgresMainLoopOnce = () => {
    try {
      step();
    } catch (error) {
      if ((isWasmTrap(error) || error instanceof RangeError) && !swallowedTraps.has(db))
        swallowedTraps.set(db, error);
      throw error;
    }
  };
}

class PgliteClient extends EventEmitter {
  constructor(
    private readonly db: PGlite,
    private readonly dataDir: string,
  ) {
    super();
  }
  async query(
    sql: string,
    params?: unknown[] | ((err: unknown, res: unknown) => void),
  ): Promise<PgLikeResult> {
    // Each query starts on a fresh event-loop turn (see yieldToEventLoop).
    await yieldToEventLoop();
    const fault = faulted.get(this.dataDir);
    if (fault) throw fault;
    let result: PgLikeResult;
    try {
      result = await this.run(sql, params);
    } catch (error) {
      const trap = swallowedTraps.get(this.db);
      if (trap !== undefined) throw this.fault(trap);
      if (isWasmTrap(error) || leavesEngineUnusable(error)) throw this.fault(error);
      throw error;
    }
    // A swallowed trap: the empty result is not the statement's answer.
    const trap = swallowedTraps.get(this.db);
    if (trap !== undefined) throw this.fault(trap);
    return result;
  }
  /** Marks the engine faulted for good (every later statement fails) and tells the fault handlers. */
  private fault(error: unknown): DatabaseFaultError {
    const fatal = new DatabaseFaultError(error);
    faulted.set(this.dataDir, fatal);
    for (const handler of faultHandlers) handler(fatal);
    return fatal;
  }
  private async run(
    sql: string,
    params?: unknown[] | ((err: unknown, res: unknown) => void),
    retried = false,
  ): Promise<PgLikeResult> {
    const values = Array.isArray(params) ? params : undefined;
    const statements = preparedStatementsOf(this.db);
    // Autocommit or not, nothing to sync: the folder is Node's file system (writes reach it at once) or memory.
    if (!values || values.length === 0) {
      if (changesSchema(sql)) statements.forgetAll();
      const { messages } = await this.db.execProtocol(serialize.query(sql), { syncToFs: false });
      return this.resultOf(sql, messages as readonly ProtocolMessage[]);
    }
    const known = statements.lookup(sql);
    // A kept statement's text was looked at when it was first parsed.
    if (known === undefined && changesSchema(sql)) statements.forgetAll();
    const name = known ?? statements.newName();
    const closing = statements.takeClosing();
    const { messages } = await this.db.execProtocol(
      extendedQuery(sql, values, name, known === undefined, closing),
      {
        syncToFs: false,
        throwOnError: false,
      },
    );
    // The statement's own answer ends at its ReadyForQuery; what follows answers the Close messages.
    const answers = messages as readonly ProtocolMessage[];
    const own = answers.slice(0, answers.findIndex((message) => message.name === 'readyForQuery') + 1);
    if (known === undefined && own.some((message) => message.name === 'parseComplete'))
      statements.remember(sql, name);
    const error = own.find((message) => message.name === 'error');
    if (error) {
      if (known !== undefined && isStalePreparedStatement(error)) {
        statements.forget(sql);
        // Outside a transaction nothing ran (the plan is checked before the statement runs): parse it afresh.
        if (!retried && !this.db.isInTransaction()) return this.run(sql, params, true);
      }
      throw error;
    }
    return this.resultOf(sql, own);
  }
  private resultOf(sql: string, messages: readonly ProtocolMessage[]): PgLikeResult {
    const last = lastResult(this.db, messages);
    return { rows: last.rows, rowCount: last.affectedRows, command: commandOf(sql) };
  }
}

/** node-postgres' serialisation of a parameter (text; a Buffer goes binary): both modes send the same text. */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): string | Buffer | null } })
  .utils.prepareValue;

/**
 * How many statements each engine keeps parsed (least recently used closed first). The platform sends a few
 * dozen distinct statements with parameters; search's filters and the batch statements' row counts add
 * variants, which the bound keeps from growing the engine's memory without end.
 */
export const PREPARED_STATEMENTS_KEPT = 128;

/**
 * How long a statement stays parsed. After its first runs PostgreSQL may keep one generic plan for it, made
 * for the tables' sizes then; on a server, autovacuum's statistics replace such plans as the tables grow, but
 * PGlite runs no autovacuum. A statement is parsed afresh (and planned anew) once a minute instead.
 */
export const PREPARED_STATEMENT_MAX_AGE_MS = 60_000;

/**
 * The statements an engine has parsed, by text. Parsing and analysing a statement is a large part of what
 * PGlite spends on a small one (docs/benchmarks.md, "Prepared statements in the embedded engine"): a
 * statement seen before is only bound and executed. Named statements outlive transactions (a rollback keeps
 * them), so the cache is the session's, one per PGlite instance. A statement closed here is closed in the
 * engine with the next one sent.
 */
class PreparedStatements {
  /** Statement text -> name and when it was parsed, least recently used first (a Map keeps insertion order). */
  private readonly names = new Map<string, { name: string; parsedAt: number }>();
  private readonly closing: string[] = [];
  private counter = 0;
  lookup(sql: string): string | undefined {
    const kept = this.names.get(sql);
    if (kept === undefined) return undefined;
    if (Date.now() - kept.parsedAt > PREPARED_STATEMENT_MAX_AGE_MS) {
      this.forget(sql);
      return undefined;
    }
    this.names.delete(sql);
    this.names.set(sql, kept);
    return kept.name;
  }
  /** A name never used before: one whose Parse failed or was skipped may still exist in the engine. */
  newName(): string {
    this.counter += 1;
    return `rigmarket_${this.counter}`;
  }
  remember(sql: string, name: string): void {
    this.names.set(sql, { name, parsedAt: Date.now() });
    if (this.names.size <= PREPARED_STATEMENTS_KEPT) return;
    const [oldest] = this.names;
    if (oldest) this.forget(oldest[0]);
  }
  forget(sql: string): void {
    const kept = this.names.get(sql);
    if (kept === undefined) return;
    this.names.delete(sql);
    this.closing.push(kept.name);
  }
  forgetAll(): void {
    for (const { name } of this.names.values()) this.closing.push(name);
    this.names.clear();
  }
  takeClosing(): string[] {
    return this.closing.splice(0);
  }
}

const preparedStatements = new WeakMap<PGlite, PreparedStatements>();

function preparedStatementsOf(db: PGlite): PreparedStatements {
  let statements = preparedStatements.get(db);
  if (!statements) {
    statements = new PreparedStatements();
    preparedStatements.set(db, statements);
  }
  return statements;
}

/**
 * A statement that may change a table's columns or types (a migration, a test's schema), or that drops the
 * session's prepared statements: every kept statement is forgotten (and closed), since one written
 * `SELECT *` would otherwise fail with "cached plan must not change result type" the next time it is bound.
 */
function changesSchema(sql: string): boolean {
  return /\b(ALTER|DROP|CREATE|DEALLOCATE|DISCARD)\s/i.test(sql);
}

/** A kept statement the engine no longer has, or whose result columns changed since it was parsed. */
function isStalePreparedStatement(error: ProtocolMessage): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (
    code === '26000' || (code === '0A000' && /cached plan must not change result type/.test(message ?? ''))
  );
}

/**
 * A statement with parameters as one batch of protocol messages (Parse, Bind, Describe, Execute, Sync) handed
 * to PGlite in one call. PGlite's query() makes six calls for it, one per message, the second a Describe of
 * the statement to learn its parameters' types: 2-5 times the CPU of the batch for a small statement
 * (docs/benchmarks.md, "The cost of a rent"). The parameters are serialised as node-postgres does for the
 * distributed mode, without their types: the server infers them from the statement, as it does there. A
 * statement parsed before (`parse` false) is only bound to its name. Statements to close follow after the
 * Sync, so that neither their answer nor a failure of theirs mixes with the statement's. The messages are
 * written by node-postgres' serializer (pg-protocol), as the distributed mode's are: PGlite's own, made for
 * browsers, took 4-10 times the CPU (docs/benchmarks.md, "The rent's statements written by pg-protocol").
 */
function extendedQuery(
  sql: string,
  values: readonly unknown[],
  name: string,
  parse: boolean,
  closing: readonly string[],
): Uint8Array {
  return Buffer.concat([
    ...(parse ? [serialize.parse({ name, text: sql })] : []),
    serialize.bind({
      statement: name,
      values: values as unknown[],
      valueMapper: (value: unknown) => prepareValue(value),
    }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
    ...closing.map((closed) => serialize.close({ type: 'S', name: closed })),
    ...(closing.length > 0 ? [serialize.sync()] : []),
  ]);
}

/** The protocol messages a result is read from (as PGlite's parser gives them). */
interface ProtocolMessage {
  name: string;
  fields?: unknown[];
  text?: string;
}

/**
 * The last statement's rows (objects by column name; a name given twice holds the last column's value) and
 * the rows affected so far, as PGlite's query() and exec() answer them: values parsed with the instance's
 * parsers (slimParsers: scalars in its table, arrays beside it), SELECT counting 0 affected.
 */
function lastResult(
  db: PGlite,
  messages: readonly ProtocolMessage[],
): { rows: Record<string, unknown>[]; affectedRows: number } {
  const arrays = arrayParsers.get(db);
  let columns: { name: string; type: number; parse: Parser | undefined }[] = [];
  let rows: Record<string, unknown>[] = [];
  let affectedRows = 0;
  let last = { rows, affectedRows };
  for (const message of messages) {
    if (message.name === 'rowDescription') {
      columns = (message.fields as { name: string; dataTypeID: number }[]).map((field) => ({
        name: field.name,
        type: field.dataTypeID,
        parse: db.parsers[field.dataTypeID] ?? arrays?.get(field.dataTypeID),
      }));
      rows = [];
    } else if (message.name === 'dataRow') {
      const row: Record<string, unknown> = {};
      (message.fields as (string | null)[]).forEach((value, i) => {
        const column = columns[i]!;
        row[column.name] = value === null || !column.parse ? value : column.parse(value, column.type);
      });
      rows.push(row);
    } else if (message.name === 'commandComplete') {
      affectedRows += affectedRowsOf(message.text ?? '');
      last = { rows, affectedRows };
      columns = [];
      rows = [];
    }
  }
  return last;
}

/** Rows a command tag says were changed (INSERT 0 n, UPDATE n, ...); 0 for the others, SELECT included. */
function affectedRowsOf(tag: string): number {
  const parts = tag.split(' ');
  if (parts[0] === 'INSERT') return parseInt(parts[2] ?? '0', 10);
  if (['UPDATE', 'DELETE', 'COPY', 'MERGE'].includes(parts[0] ?? '')) return parseInt(parts[1] ?? '0', 10);
  return 0;
}

export interface PoolLike {
  connect(callback: (err: unknown, client: unknown, release: () => void) => void): void;
  end(callback?: (err: unknown) => void): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** What a statement gets once the embedded database was closed (pool ended). */
export const EMBEDDED_DATABASE_CLOSED = 'the embedded database is closed';

/**
 * A statement reached a closed database: a background loop outlived its app (docs/operations.md, Stopping).
 * It is refused either way; under test (NODE_ENV=test) this also writes where it came from to stderr, so that
 * such a leak shows in the run's log and not only in an error the loop swallows.
 */
export function reportLateStatement(how: string, origin?: string): void {
  if (process.env.NODE_ENV !== 'test') return;
  process.stderr.write(
    `WARN a statement reached a closed database (${how}): a background loop outlived its app\n${origin ?? ''}\n`,
  );
}

export function pglitePoolClass(dataDir: string, firstCluster?: string): new (options?: unknown) => PoolLike {
  return class ExclusivePglitePool extends EventEmitter {
    /** Set by end(): a query that comes later (a loop not yet stopped) fails instead of opening the folder again. */
    private ended = false;
    constructor(_options?: unknown) {
      super();
    }
    connect(callback: (err: unknown, client: PgliteClient | null, release: () => void) => void): void {
      if (this.ended) {
        callback(new Error(EMBEDDED_DATABASE_CLOSED), null, () => undefined);
        return;
      }
      let lock = locks.get(dataDir);
      if (!lock) {
        lock = new ExclusiveLock();
        locks.set(dataDir, lock);
      }
      void lock.acquire().then(async (release) => {
        try {
          // The session changes hands on a fresh turn, so waiting requests interleave with a busy loop.
          await yieldToEventLoop();
          if (this.ended) {
            reportLateStatement(`asked of ${dataDir} before it closed, served after`);
            throw new Error(EMBEDDED_DATABASE_CLOSED);
          }
          const db = await pgliteInstance(dataDir, firstCluster);
          let released = false;
          callback(null, new PgliteClient(db, dataDir), () => {
            if (!released) {
              released = true;
              release();
            }
          });
        } catch (error) {
          release();
          callback(error, null, () => undefined);
        }
      });
    }
    end(callback?: (err: unknown) => void): void {
      this.ended = true;
      closePglite(dataDir).then(
        () => callback?.(null),
        (err: unknown) => callback?.(err),
      );
    }
  };
}
