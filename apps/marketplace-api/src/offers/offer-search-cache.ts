import { type ReadModelVersion, VersionedAnswerCache } from '@rigmarket/event-sourcing';
import type { NextWindows, OfferQuery } from './offer-query';

/** A search's answer and the last moment (epoch ms) at which time alone cannot have changed it. */
export interface TimedAnswer {
  /** The answer's JSON text, sent as is. */
  text: string;
  /** The earliest instant after the search's "now" at which an offer's rentability or a window changes. */
  changesAtMs: number;
}

export interface OfferSearchCacheOptions {
  /** At most this long after it was computed an answer is served (its `duration` fields age by as much). */
  maxAgeMs: number;
  /** Entries kept at most, and their text's length in all (an answer of 100 offers is ~110 KB). */
  maxEntries: number;
  maxChars: number;
}

export const OFFER_SEARCH_CACHE_DEFAULTS: OfferSearchCacheOptions = {
  maxAgeMs: 1000,
  maxEntries: 64,
  maxChars: 16 * 1024 * 1024,
};

/**
 * An answer as the route sends it: the same object for every request an entry serves, so what the route derives
 * from the text (its ETag) is computed once per entry, not once per request.
 */
export interface SearchAnswer {
  readonly text: string;
  etag?: string;
}

/**
 * Whether the answer to a query changes with time only at the instants TimedAnswer.changesAtMs names. Time
 * enters a search in three ways: `duration` (rentable-until minus now), `rentable` (rentable-until after now)
 * and the maintenance windows still pending. A filter on `duration` moves with every millisecond, and a
 * `rentable` that is not `= true` (false, neq, in, notin, an order) admits offers when the end of an offer the
 * answer did not show passes: such queries are answered fresh every time. Everything else changes at a
 * returned offer's end, or at a window's start or end (offers-handlers: searchOffersTimed).
 */
export function cacheableQuery(query: OfferQuery): boolean {
  if (query.order.some((o) => o.field === 'rentable')) return false;
  return query.filters.every(
    (f) => f.field !== 'duration' && (f.field !== 'rentable' || (f.op === 'eq' && f.value === true)),
  );
}

/**
 * Answers of offer searches kept in memory while the offers read model is unchanged (docs/benchmarks.md,
 * "Search index strategy"; the rules of keeping: VersionedAnswerCache). The key is the parsed query, so
 * differently written bodies of one search share an entry; nothing in an answer depends on who asks. An entry
 * is served only while
 * - the read model's version is the one it was computed under (a change committed since drops it), and
 *   never while the version is unknown (null);
 * - now is before min(computed + maxAgeMs, the answer's changesAtMs), and not before it was computed (a
 *   clock set back);
 * and it is stored only if the version did not move while the search ran (the answer might or might not
 * hold the change). Concurrent misses of one query under one version wait for one search.
 */
export class OfferSearchCache {
  private readonly kept: VersionedAnswerCache<string, SearchAnswer>;
  private readonly running = new Map<string, { version: number; answer: Promise<TimedAnswer> }>();
  /** Answers served from memory and searches run (for tests and the bench). */
  hits = 0;
  misses = 0;

  constructor(
    readModel: ReadModelVersion,
    private readonly options: OfferSearchCacheOptions = OFFER_SEARCH_CACHE_DEFAULTS,
  ) {
    this.kept = new VersionedAnswerCache(
      readModel,
      { maxEntries: options.maxEntries, maxSize: options.maxChars, maxAnswerSize: options.maxChars },
      (answer) => answer.text.length,
    );
  }

  get size(): number {
    return this.kept.size;
  }

  /**
   * The answer to `key` at `nowMs`, from memory when an entry is valid, else from `search` (called with the
   * same `nowMs`, so the answer is exactly what a fresh search at that instant gives).
   */
  async answer(key: string, nowMs: number, search: () => Promise<TimedAnswer>): Promise<SearchAnswer> {
    const version = this.kept.mark();
    if (version === null) {
      this.misses += 1;
      return { text: (await search()).text };
    }
    const cached = this.kept.get(key, nowMs);
    if (cached !== undefined) {
      this.hits += 1;
      return cached;
    }
    const joined = this.running.get(key);
    if (joined && joined.version === version) {
      const answer = await joined.answer.catch(() => undefined);
      const after = this.kept.get(key, nowMs);
      if (answer && after !== undefined) {
        this.hits += 1;
        return after;
      }
    }
    this.misses += 1;
    const answer = search();
    this.running.set(key, { version, answer });
    try {
      const result = await answer;
      const fresh: SearchAnswer = { text: result.text };
      const validUntilMs = Math.min(nowMs + this.options.maxAgeMs, result.changesAtMs);
      this.kept.store(key, fresh, validUntilMs, version, nowMs);
      return fresh;
    } finally {
      if (this.running.get(key)?.answer === answer) this.running.delete(key);
    }
  }
}

/** The maintenance windows a search clips offers with (offers.handlers.ts: nextMaintenanceWindows). */
export interface PendingWindows extends NextWindows {
  /** The next instant (epoch s) a window starts or ends; null when no window is pending. */
  changesAt: number | null;
}

/**
 * The pending maintenance windows, kept in memory while the windows read model is unchanged: every search the
 * answer cache misses needs them before its own statement, and they change far more rarely than the offers
 * (docs/benchmarks.md, "Cold searches"). Kept under the VersionedAnswerCache rules, with a version of their own
 * table (a rent changes the offers, not the windows), until the next start or end of a window (before it, the
 * windows not ended at `now` and each machine's next start are the same for every later `now`, so the read
 * would answer the same rows) and for at most `maxAgeMs`, as an answer is: a change another process committed
 * is seen here when its signal arrives, so the answers and the windows they are made with are as fresh.
 */
export class MaintenanceWindowsCache {
  private readonly kept: VersionedAnswerCache<'windows', PendingWindows>;

  constructor(
    windowsReadModel: ReadModelVersion,
    private readonly maxAgeMs = OFFER_SEARCH_CACHE_DEFAULTS.maxAgeMs,
  ) {
    this.kept = new VersionedAnswerCache(
      windowsReadModel,
      { maxEntries: 1, maxSize: 1, maxAnswerSize: 1 },
      () => 1,
    );
  }

  /** The windows at `nowMs`: kept, or read with `read` (and kept when nothing changed meanwhile). */
  async at(nowMs: number, read: () => Promise<PendingWindows>): Promise<PendingWindows> {
    const kept = this.kept.get('windows', nowMs);
    if (kept !== undefined) return kept;
    const version = this.kept.mark();
    const windows = await read();
    const changesAtMs = windows.changesAt === null ? Number.POSITIVE_INFINITY : windows.changesAt * 1000;
    this.kept.store('windows', windows, Math.min(nowMs + this.maxAgeMs, changesAtMs), version, nowMs);
    return windows;
  }
}
