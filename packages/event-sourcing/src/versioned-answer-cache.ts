/**
 * What a cache of answers asks of its read models: a number that moves whenever a transaction that changed one
 * of their tables commits (in this process at once, in another one by NOTIFY), or null while a change could go
 * unseen (PostgreSQL's LISTEN connection down). `Database.watchReadModels` gives one (read-model-signals.ts).
 */
export interface ReadModelVersion {
  version(): number | null;
}

/** How much a VersionedAnswerCache keeps; sizes are what its `sizeOf` says (bytes, characters). */
export interface AnswerCacheLimits {
  /** Answers kept at most (the least recently used goes first). */
  maxEntries: number;
  /** Their sizes in all, at most. */
  maxSize: number;
  /** An answer larger than this is never kept. */
  maxAnswerSize: number;
}

interface Entry<A> {
  answer: A;
  size: number;
  /** Served while validFromMs <= now < validUntilMs (epoch ms). */
  validFromMs: number;
  validUntilMs: number;
}

/**
 * Answers derived from read models, kept by key while those read models are unchanged (read-model-signals.ts,
 * "How a cache uses a watch"), so a query that ran once is not run again until something it read changed:
 * - `mark()` before the read gives the version to `store` the answer under; `store` keeps the answer only if
 *   the version is still that one (a change that committed meanwhile may or may not be in the answer);
 * - any change to the read models (by this process or another) drops every answer, and while the version
 *   is unknown (null) nothing is served or stored;
 * - an answer is served only within the times it was stored for (time alone changes some answers: the caller
 *   says when), and one valid at no instant is not kept;
 * - at most `limits.maxEntries` answers and `limits.maxSize` in all (least recently used first), none larger
 *   than `limits.maxAnswerSize`.
 * What the key is, what an answer holds and how long it holds is each context's (instance-lifecycle's poll
 * answers, marketplace's offer searches).
 */
export class VersionedAnswerCache<K, A> {
  private readonly entries = new Map<K, Entry<A>>();
  private total = 0;
  private version: number | null = null;

  constructor(
    private readonly readModels: ReadModelVersion,
    private readonly limits: AnswerCacheLimits,
    private readonly sizeOf: (answer: A) => number,
  ) {}

  /** The version to hand to `store` for a read that starts now (null: do not store). */
  mark(): number | null {
    return this.readModels.version();
  }

  /** The answer kept for `key`, if the read models are unchanged since and `nowMs` is within its times. */
  get(key: K, nowMs: number): A | undefined {
    if (!this.sync()) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (nowMs >= entry.validUntilMs || nowMs < entry.validFromMs) {
      this.total -= entry.size;
      return undefined;
    }
    // Most recently used last: eviction takes the first.
    this.entries.set(key, entry);
    return entry.answer;
  }

  /**
   * Keeps `answer` for `key`, to be served while validFromMs <= now < validUntilMs, if the read models are
   * still at `mark` (taken before the answer was read).
   */
  store(key: K, answer: A, validUntilMs: number, mark: number | null, validFromMs = -Infinity): void {
    if (mark === null || !this.sync() || mark !== this.version) return;
    const size = this.sizeOf(answer);
    if (validUntilMs <= validFromMs || size > this.limits.maxAnswerSize) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= old.size;
    }
    for (const [oldKey, entry] of this.entries) {
      if (this.entries.size < this.limits.maxEntries && this.total + size <= this.limits.maxSize) break;
      this.entries.delete(oldKey);
      this.total -= entry.size;
    }
    this.entries.set(key, { answer, size, validFromMs, validUntilMs });
    this.total += size;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** Empties the cache if its read models changed since it was filled; false while their version is unknown. */
  private sync(): boolean {
    const current = this.readModels.version();
    if (current !== this.version) {
      this.entries.clear();
      this.total = 0;
      this.version = current;
    }
    return current !== null;
  }
}
