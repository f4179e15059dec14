import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import {
  type ChainReport,
  type ContextDefinition,
  type Database,
  type Projection,
  type Sql,
  type EventSource,
  contextProjections,
  rebuildContextProjection,
  replayProjection,
  verifyChain,
} from '@rigmarket/event-sourcing';
import { ledgerImbalances } from '@rigmarket/marketplace-api';
import { NO_PROGRESS, type Progress } from './operator-output';

/** A table whose live rows differ from the rows its projection rebuilds from the events. */
export interface TableDifference {
  context: string;
  projection: string;
  table: string;
  /** Rows (as JSON) only in the live table, and only in the rebuilt one; duplicates counted. */
  liveOnly: string[];
  rebuiltOnly: string[];
}

/**
 * One invariant `rigmarket verify` checks besides the read models. `run` answers one line per problem
 * (none: the check holds). Add a check by adding an entry to VERIFY_CHECKS.
 */
export interface VerifyCheck {
  name: string;
  run(db: Database): Promise<string[]>;
}

export const VERIFY_CHECKS: VerifyCheck[] = [
  {
    // credit granted - charges + earnings = balance, for every account (docs/operations.md)
    name: 'ledger balances',
    async run(db) {
      if (!(await schemaPresent(db, 'marketplace'))) return [];
      const found = await db.transaction((sql) => ledgerImbalances(sql));
      return found.map((imbalance) => JSON.stringify(imbalance));
    },
  },
];

async function schemaPresent(sql: Sql, schema: string): Promise<boolean> {
  const [row] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
    `${schema}.events`,
  ]);
  return row?.found === true;
}

async function rows(sql: Sql, table: string): Promise<string[]> {
  const found = await sql.query<Record<string, unknown>>(`SELECT * FROM ${table}`);
  return found.map((row) => JSON.stringify(row)).sort();
}

/** The rows of `a` not matched one for one in `b` (both sorted lists of JSON rows). */
function minus(a: readonly string[], b: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const row of b) counts.set(row, (counts.get(row) ?? 0) + 1);
  const left: string[] = [];
  for (const row of a) {
    const n = counts.get(row) ?? 0;
    if (n > 0) counts.set(row, n - 1);
    else left.push(row);
  }
  return left;
}

class RolledBack<T> {
  constructor(readonly value: T) {}
}

/**
 * Replays one projection from the events inside a transaction that is rolled back, and compares each
 * of its tables with the live rows read in the same snapshot (REPEATABLE READ): the live read model is
 * never touched. Answers the tables that differ.
 */
export async function projectionDifferences(
  db: Database,
  context: ContextDefinition,
  projection: Projection,
): Promise<TableDifference[]> {
  const schema = CONTEXT_SCHEMAS[context.context];
  try {
    await db.transaction(async (sql) => {
      await sql.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const live = new Map<string, string[]>();
      for (const table of projection.tables) live.set(table, await rows(sql, table));
      await replayProjection(sql, schema, projection);
      const differences: TableDifference[] = [];
      for (const table of projection.tables) {
        const rebuilt = await rows(sql, table);
        const before = live.get(table) ?? [];
        const liveOnly = minus(before, rebuilt);
        const rebuiltOnly = minus(rebuilt, before);
        if (liveOnly.length || rebuiltOnly.length)
          differences.push({
            context: context.context,
            projection: projection.name,
            table,
            liveOnly,
            rebuiltOnly,
          });
      }
      throw new RolledBack(differences);
    });
  } catch (outcome) {
    if (outcome instanceof RolledBack) return outcome.value as TableDifference[];
    throw outcome;
  }
  throw new Error('unreachable: the verify transaction always rolls back');
}

export interface VerifyReport {
  differences: TableDifference[];
  /** Projections that could not be replayed at all (the error message). */
  failures: Array<{ context: string; projection: string; error: string }>;
  checks: Array<{ name: string; problems: string[] }>;
}

/**
 * `rigmarket verify`: every projection of every context present in the database replayed into a
 * rolled-back transaction and diffed with its live tables, then every VERIFY_CHECKS entry. Writes a
 * line per projection and check, and each differing row; `ok` is false on any difference.
 */
export async function verify(
  db: Database,
  contexts: readonly ContextDefinition[],
  write: (line: string) => void,
  checks: readonly VerifyCheck[] = VERIFY_CHECKS,
  progress: Progress = NO_PROGRESS,
): Promise<VerifyReport & { ok: boolean }> {
  const report: VerifyReport = { differences: [], failures: [], checks: [] };
  const present: ContextDefinition[] = [];
  for (const c of contexts) {
    if (await schemaPresent(db, CONTEXT_SCHEMAS[c.context])) present.push(c);
    else write(`${c.context}: not in this database, skipped`);
  }
  progress.phase('verify', present.reduce((n, c) => n + contextProjections(c).length, 0) + checks.length);
  for (const c of present) {
    for (const p of contextProjections(c)) {
      progress.step();
      try {
        const found = await projectionDifferences(db, c, p);
        report.differences.push(...found);
        write(`${c.context}/${p.name}: ${found.length ? `DIFFERS in ${found.length} table(s)` : 'equal'}`);
        for (const d of found) {
          for (const row of d.liveOnly) write(`  ${d.table} live only:    ${row}`);
          for (const row of d.rebuiltOnly) write(`  ${d.table} rebuilt only: ${row}`);
        }
      } catch (error) {
        const message = (error as Error).message;
        report.failures.push({ context: c.context, projection: p.name, error: message });
        write(`${c.context}/${p.name}: REPLAY FAILED: ${message}`);
      }
    }
  }
  for (const check of checks) {
    progress.step();
    const problems = await check
      .run(db)
      .catch((error: unknown) => [`check failed: ${(error as Error).message}`]);
    report.checks.push({ name: check.name, problems });
    write(`check ${check.name}: ${problems.length ? `${problems.length} problem(s)` : 'ok'}`);
    for (const problem of problems) write(`  ${problem}`);
  }
  const ok =
    report.differences.length === 0 &&
    report.failures.length === 0 &&
    report.checks.every((c) => c.problems.length === 0);
  return { ...report, ok };
}

/**
 * `rigmarket rebuild`: each target rebuilt in its own transaction; a failure is reported and the next
 * target still rebuilt. Answers the number that failed.
 */
export async function rebuildAll(
  db: Database,
  targets: ReadonlyArray<{ c: ContextDefinition; p: Projection }>,
  write: (line: string) => void,
  /** Where other contexts' events come from (RIGMARKET_REBUILD_SOURCE=kafka); default their stores here. */
  remote?: EventSource,
  progress: Progress = NO_PROGRESS,
): Promise<number> {
  let failed = 0;
  progress.phase('rebuild', targets.length);
  for (const { c, p } of targets) {
    progress.step();
    const started = Date.now();
    try {
      const applied = await rebuildContextProjection(db, c.context, p, remote);
      write(`rebuilt ${c.context}/${p.name}: ${applied} events applied in ${Date.now() - started} ms`);
    } catch (error) {
      failed += 1;
      write(`FAILED ${c.context}/${p.name}: ${(error as Error).message}`);
    }
  }
  write(`${targets.length - failed} of ${targets.length} rebuilt${failed ? `, ${failed} failed` : ''}`);
  return failed;
}

/** `rigmarket verify --chain`: one context's chain, as checked. */
export interface ChainVerdict {
  context: string;
  report: ChainReport;
}

/**
 * Walks every context's hash chain (each in one REPEATABLE READ snapshot) and writes its head hash, the
 * value an operator publishes, or its first broken link. `ok` is false on any broken link.
 */
export async function verifyChains(
  db: Database,
  contexts: readonly ContextDefinition[],
  write: (line: string) => void,
  progress: Progress = NO_PROGRESS,
): Promise<{ ok: boolean; verdicts: ChainVerdict[] }> {
  const verdicts: ChainVerdict[] = [];
  progress.phase('verify --chain', contexts.length);
  for (const c of contexts) {
    progress.step();
    const schema = CONTEXT_SCHEMAS[c.context];
    if (!(await schemaPresent(db, schema))) {
      write(`${c.context}: not in this database, skipped`);
      continue;
    }
    const report = await db.transaction(async (sql) => {
      await sql.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      return verifyChain(sql, schema);
    });
    verdicts.push({ context: c.context, report });
    const b = report.broken;
    write(
      b
        ? `${c.context}: BROKEN after ${report.events} event(s): global position ${b.globalPosition}, stream ${b.streamId} ` +
            `position ${b.streamPosition}: expected ${b.expected}, found ${b.found}`
        : `${c.context}: ${report.events} event(s), head ${report.head} at global position ${report.recordedHead?.globalPosition ?? '0'}`,
    );
  }
  return { ok: verdicts.every((v) => !v.report.broken), verdicts };
}
