import { escapeLiteral } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { databaseStatements, databaseTransactions } from './metrics';
import { EMBEDDED_DATABASE_CLOSED, pglitePoolClass, reportLateStatement } from './pglite-pool';
import {
  READ_MODEL_CHANNEL,
  ReadModelListener,
  ReadModelWatch,
  openReadModelChanges,
  readModelChangesCommitted,
  readModelNotifyPayload,
} from './read-model-signals';

/** A statement runner bound to one transaction (or to autocommit). */
export interface Sql {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs a statement and returns the number of affected rows. */
  execute(sql: string, params?: unknown[]): Promise<number>;
}

export type DatabaseOptions =
  | { kind: 'postgres'; url: string; poolSize?: number; applicationName?: string }
  | {
      kind: 'pglite';
      dataDir: string;
      /** A gzipped cluster an empty `dataDir` starts from (pglite-pool.ts, `pgliteInstance`). */
      firstCluster?: string;
    };

function bind(runner: QueryRunner): Sql {
  return {
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      databaseStatements.inc();
      const result = await runner.query(sql, params, true);
      return (result.records ?? []) as Row[];
    },
    async execute(sql: string, params?: unknown[]): Promise<number> {
      databaseStatements.inc();
      const result = await runner.query(sql, params, true);
      return result.affected ?? 0;
    },
  };
}

/**
 * An open transaction of a Database, for what a process keeps between transactions (the chain heads its
 * appends left, event-store.ts).
 */
export interface OpenTransaction {
  /** The database it runs on (a key for what a process keeps between transactions). */
  readonly database: Database;
  /**
   * Whether it has its database to itself until it ends: embedded, where PGlite's one session is handed to one
   * transaction at a time (pglite-pool.ts), so what it reads stays true until it or a later one commits.
   */
  readonly sole: boolean;
  /** Called once the transaction has ended: `committed` false after a rollback or a failed commit. */
  onEnd(callback: (committed: boolean) => void): void;
}

const openTransactions = new WeakMap<Sql, OpenTransaction>();

/** The transaction `sql` runs (undefined for a Database's autocommit statements). */
export function transactionOf(sql: Sql): OpenTransaction | undefined {
  return openTransactions.get(sql);
}

/**
 * The storage edge: TypeORM's postgres driver over node-postgres (distributed) or over PGlite
 * (embedded). Same SQL, same migrations in both.
 */
export class Database implements Sql {
  /** The LISTEN connection of read-model signals (PostgreSQL), started by the first watch. */
  private listener: ReadModelListener | undefined;
  /** Set by close(): a statement asked for later (a loop that outlived its app) is refused. */
  private closed = false;

  private constructor(
    readonly dataSource: DataSource,
    readonly options: DatabaseOptions,
  ) {}

  static async connect(options: DatabaseOptions): Promise<Database> {
    const dataSource =
      options.kind === 'postgres'
        ? new DataSource({
            type: 'postgres',
            url: options.url,
            poolSize: options.poolSize ?? 10,
            applicationName: options.applicationName,
            synchronize: false,
            migrationsRun: false,
          })
        : new DataSource({
            type: 'postgres',
            driver: { Pool: pglitePoolClass(options.dataDir, options.firstCluster) },
            synchronize: false,
            migrationsRun: false,
          });
    await dataSource.initialize();
    return new Database(dataSource, options);
  }

  static fromEnvironment(env: NodeJS.ProcessEnv = process.env): DatabaseOptions {
    if (env.DATABASE_URL) return { kind: 'postgres', url: env.DATABASE_URL };
    return { kind: 'pglite', dataDir: env.RIGMARKET_DATA_DIR ?? './data' };
  }

  async transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    this.refuseIfClosed();
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    const ended: ((committed: boolean) => void)[] = [];
    let committed = false;
    try {
      databaseTransactions.inc();
      await runner.startTransaction();
      try {
        const sql = bind(runner);
        openTransactions.set(sql, {
          database: this,
          sole: this.options.kind === 'pglite',
          onEnd: (callback) => ended.push(callback),
        });
        // Read models the work's projections changed (read-model-signals.ts): told at commit.
        const changed = openReadModelChanges(sql);
        const result = await work(sql);
        if (changed.size > 0 && this.options.kind === 'postgres') {
          // The NOTIFY and the COMMIT in one round trip (two statements of one simple query): the signal is
          // sent at commit anyway, and a failed NOTIFY leaves the COMMIT unrun (the catch rolls back).
          databaseStatements.inc();
          await runner.query(
            `SELECT pg_notify(${escapeLiteral(READ_MODEL_CHANNEL)}, ${escapeLiteral(readModelNotifyPayload(changed))}); COMMIT`,
          );
        } else await runner.commitTransaction();
        committed = true;
        for (const end of ended.splice(0)) end(true);
        if (changed.size > 0) readModelChangesCommitted(changed);
        return result;
      } catch (error) {
        // A connection lost mid-transaction also fails the rollback (TypeORM: "Query runner already
        // released"); the server rolls back by itself then, and the caller must see why it failed (a lost
        // connection answers 503), not the rollback's error.
        if (runner.isTransactionActive && !committed)
          await runner.rollbackTransaction().catch(() => undefined);
        for (const end of ended.splice(0)) end(false);
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  async query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]> {
    return this.transactionless((s) => s.query<Row>(sql, params));
  }

  async execute(sql: string, params?: unknown[]): Promise<number> {
    return this.transactionless((s) => s.execute(sql, params));
  }

  /**
   * Follows changes to read-model tables (schema-qualified names) for a cache of answers derived from them
   * (read-model-signals.ts). On PostgreSQL the first watch starts this process's LISTEN connection; its
   * watches are live only while that connection is up.
   */
  watchReadModels(tables: readonly string[]): ReadModelWatch {
    if (this.options.kind === 'pglite') return new ReadModelWatch(tables);
    const listener = (this.listener ??= new ReadModelListener(this.options.url));
    return new ReadModelWatch(tables, () => listener.connected);
  }

  /** Resolves once watches on this database are live (PostgreSQL: the LISTEN connection is up). */
  readModelSignalsReady(): Promise<void> {
    return this.listener?.ready() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.close();
    this.listener = undefined;
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  /**
   * A statement after close() fails with a message that says so (TypeORM's own is 'Driver not Connected'), and
   * under test says so on stderr too (reportLateStatement). One asked for before close() and still waiting for
   * PGlite's connection is refused (and reported) by the pool alike.
   */
  private refuseIfClosed(): void {
    if (!this.closed) return;
    const error = new DatabaseClosedError(this.options.kind);
    reportLateStatement('asked after close()', error.stack);
    throw error;
  }

  private async transactionless<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    this.refuseIfClosed();
    const runner = this.dataSource.createQueryRunner();
    try {
      return await work(bind(runner));
    } finally {
      await runner.release();
    }
  }
}

/** A statement asked of a Database after its close(). */
export class DatabaseClosedError extends Error {
  constructor(kind: DatabaseOptions['kind']) {
    super(kind === 'pglite' ? EMBEDDED_DATABASE_CLOSED : 'the database is closed');
    this.name = 'DatabaseClosedError';
  }
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as {
    code?: string;
    constraint?: string;
    driverError?: { code?: string; constraint?: string };
  };
  const code = e?.code ?? e?.driverError?.code;
  if (code !== '23505') return false;
  if (!constraint) return true;
  const name = e?.constraint ?? e?.driverError?.constraint;
  // PGlite does not always report the constraint name; fall back to the message.
  return name === constraint || String((error as Error).message).includes(constraint);
}
