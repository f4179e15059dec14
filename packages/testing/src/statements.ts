import type { Database } from '@rigmarket/event-sourcing';

/** What a statement watch has counted so far. */
export interface StatementWatch {
  /** Statements (queries, executes, transactions) asked of the database since the watch began. */
  readonly began: number;
  /** Of those, the ones that have not ended yet. */
  readonly inFlight: number;
  /** Puts the database's own methods back. */
  restore(): void;
}

/**
 * Counts the statements asked of `db` from now on: a test of a stop path checks that none is in flight when a
 * loop's stop() (or an app's close()) resolved, and that none begins afterwards.
 */
export function watchStatements(db: Database): StatementWatch {
  const counts = { began: 0, inFlight: 0 };
  const methods = ['query', 'execute', 'transaction'] as const;
  const originals = methods.map((method) => [method, db[method]] as const);
  for (const [method, original] of originals) {
    const call = original as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(db, method, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]) => {
        counts.began += 1;
        counts.inFlight += 1;
        return call.apply(db, args).finally(() => (counts.inFlight -= 1));
      },
    });
  }
  return {
    get began() {
      return counts.began;
    },
    get inFlight() {
      return counts.inFlight;
    },
    restore() {
      for (const [method] of originals) delete (db as unknown as Record<string, unknown>)[method];
    },
  };
}
