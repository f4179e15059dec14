import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { eventually } from './services';

export interface RebuildMismatch {
  projection: string;
  table: string;
  live: unknown[];
  rebuilt: unknown[];
}

async function snapshot(runtime: ContextRuntime, table: string): Promise<unknown[]> {
  // Row order is not part of a read model: compare the rows as sorted JSON.
  const rows = await runtime.db.query<Record<string, unknown>>(`SELECT * FROM ${table}`);
  return rows.map((row) => JSON.stringify(row)).sort();
}

/**
 * Rebuilds every projection of a context from the event stores and reports each table whose rows differ
 * from the live ones ("every read model can be rebuilt from events and must equal the live one").
 * Call it once the platform is quiet (no event in flight).
 */
export async function rebuildMismatches(runtime: ContextRuntime): Promise<RebuildMismatch[]> {
  const mismatches: RebuildMismatch[] = [];
  for (const projection of runtime.projections) {
    const live = new Map<string, unknown[]>();
    for (const table of projection.tables) live.set(table, await snapshot(runtime, table));
    await runtime.rebuild(projection.name);
    for (const table of projection.tables) {
      const rebuilt = await snapshot(runtime, table);
      const before = live.get(table) ?? [];
      if (JSON.stringify(before) !== JSON.stringify(rebuilt))
        mismatches.push({ projection: projection.name, table, live: before, rebuilt });
    }
  }
  return mismatches;
}

/**
 * rebuildMismatches once the platform has settled: retried while the last events may still be on their
 * way over the transport; the mismatches of the last try otherwise (an empty list means equal).
 */
export async function settledRebuildMismatches(
  runtime: ContextRuntime,
  timeoutMs = 30_000,
): Promise<RebuildMismatch[]> {
  return eventually(
    async () => {
      const found = await rebuildMismatches(runtime);
      return found.length === 0 ? found : undefined;
    },
    timeoutMs,
    `${runtime.schema} read models equal after rebuild`,
  ).catch(() => rebuildMismatches(runtime));
}
