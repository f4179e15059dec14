import type { AuthenticatedKey } from './auth-keys.projection';

/**
 * How many times this process applied an event to each schema's key projection (auth-keys.projection.ts
 * counts every event it applies, before the transaction applying it commits). A cache compares it with what
 * it saw last: any change empties it.
 */
const generations = new Map<string, number>();

/** Called by the key projection for every event it applies: every cache of that schema empties. */
export function keysChanged(schema: string): void {
  generations.set(schema, (generations.get(schema) ?? 0) + 1);
}

const generationOf = (schema: string): number => generations.get(schema) ?? 0;

/** At most this many keys per cache; a full cache empties (a key not cached is looked up as before). */
export const MAX_CACHED_KEYS = 10_000;

interface Entry {
  key: AuthenticatedKey;
  /** epoch ms; null: never */
  expiresAt: number | null;
}

/**
 * The keys a context found valid, by hash, so that a request does not look its key up again: only where the
 * process applies every event of its key projection itself and no query runs while a transaction is open,
 * i.e. on the embedded database (PGlite: one process, one session, handed out exclusively). There a
 * revocation (ApiKeyDeleted, ApiKeyReset, InstanceDestroyed) empties the cache in the transaction that
 * applies it, so the next request reads the projection as before: revocation is as immediate as without the
 * cache. A look-up that started before the change does not store its (older) answer: `store` takes the
 * generation read before the query. Unknown keys are never cached; an expiring key is checked against the
 * clock on every hit. Distributed processes do not use it: another replica may apply the revocation.
 */
export class AuthKeyCache {
  private readonly entries = new Map<string, Entry>();
  private generation: number;

  constructor(private readonly schema: string) {
    this.generation = generationOf(schema);
  }

  /** The generation to hand to `store` for a look-up that starts now. */
  mark(): number {
    return generationOf(this.schema);
  }

  get(hash: string, nowMs: number): AuthenticatedKey | undefined {
    this.sync();
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= nowMs) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  /** Keeps a key found valid by a look-up that started at `mark`, unless the keys changed meanwhile. */
  store(hash: string, key: AuthenticatedKey, expiresAt: number | null, mark: number): void {
    this.sync();
    if (mark !== this.generation) return;
    if (this.entries.size >= MAX_CACHED_KEYS) this.entries.clear();
    this.entries.set(hash, { key, expiresAt });
  }

  private sync(): void {
    const current = generationOf(this.schema);
    if (current !== this.generation) {
      this.entries.clear();
      this.generation = current;
    }
  }
}
