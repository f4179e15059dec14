import type { ReadModelWatch } from '@rigmarket/event-sourcing';
import type { AuthenticatedKey } from './auth-keys.projection';

/** At most this many keys per cache; a full cache empties (a key not cached is looked up as before). */
export const MAX_CACHED_KEYS = 10_000;

interface Entry {
  key: AuthenticatedKey;
  /** epoch ms; null: never */
  expiresAt: number | null;
}

/**
 * The keys a context found valid, by hash, so that a request does not look its key up again. It follows the
 * context's `auth_api_keys` table through a read-model watch (`Database.watchReadModels`, event-sourcing's
 * read-model-signals.ts): a change that could make a cached key invalid (a key reset or deleted, an instance
 * key revoked, a rebuild), applied by this process or, on PostgreSQL, by another (its NOTIFY), empties the
 * cache, so the next request reads the projection again: revocation is as immediate as the signal. A key
 * added (an API key created, a rent's instance key) signals nothing: it changes no row a cached key came from
 * (the projection's `signals`). While the signals are
 * not live (PostgreSQL: this process's LISTEN connection is down) nothing is served from it or stored. A
 * look-up that a change overtook does not store its (older) answer: `store` takes the version read before
 * the query. Unknown keys are never cached; an expiring key is checked against the clock on every hit.
 */
export class AuthKeyCache {
  private readonly entries = new Map<string, Entry>();
  private version: number | null = null;

  constructor(private readonly watch: ReadModelWatch) {}

  /** The version to hand to `store` for a look-up that starts now (null: do not store). */
  mark(): number | null {
    return this.watch.version();
  }

  get(hash: string, nowMs: number): AuthenticatedKey | undefined {
    if (!this.sync()) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= nowMs) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  /** Keeps a key found valid by a look-up that started at `mark`, unless the keys changed meanwhile. */
  store(hash: string, key: AuthenticatedKey, expiresAt: number | null, mark: number | null): void {
    if (mark === null || !this.sync() || mark !== this.version) return;
    if (this.entries.size >= MAX_CACHED_KEYS) this.entries.clear();
    this.entries.set(hash, { key, expiresAt });
  }

  /** Empties the cache if the keys changed since it was filled; false while the signals are not live. */
  private sync(): boolean {
    const current = this.watch.version();
    if (current !== this.version) {
      this.entries.clear();
      this.version = current;
    }
    return current !== null;
  }
}
