import { type AnswerCacheLimits, VersionedAnswerCache } from './versioned-answer-cache';

/** The rules every cache of read-model answers keeps (each context's own: poll-answer-cache.spec, offer-search-cache.spec). */
describe('VersionedAnswerCache', () => {
  let version: number | null = 1;
  // Read models whose version the test moves by hand (a real watch follows read-model signals).
  const readModels = { version: () => version };
  const roomy: AnswerCacheLimits = { maxEntries: 100, maxSize: 1000, maxAnswerSize: 1000 };
  const cacheOf = (limits = roomy) =>
    new VersionedAnswerCache<string, string>(readModels, limits, (a) => a.length);

  beforeEach(() => {
    version = 1;
  });

  it('serves an answer until its read models change, and never stores one a change overtook', () => {
    const cache = cacheOf();
    const mark = cache.mark();
    cache.store('q', 'one', Infinity, mark);
    expect(cache.get('q', 0)).toBe('one');
    expect(cache.get('r', 0)).toBeUndefined();
    version = 2;
    expect(cache.get('q', 0)).toBeUndefined();
    const before = cache.mark();
    version = 3; // a change committed while the answer was read
    cache.store('q', 'two', Infinity, before);
    expect(cache.get('q', 0)).toBeUndefined();
    cache.store('q', 'three', Infinity, cache.mark());
    expect(cache.get('q', 0)).toBe('three');
  });

  it('neither serves nor stores while the version is unknown', () => {
    const cache = cacheOf();
    cache.store('q', 'x', Infinity, cache.mark());
    version = null;
    expect(cache.get('q', 0)).toBeUndefined();
    cache.store('q', 'y', Infinity, cache.mark());
    expect(cache.size).toBe(0);
    // The version moves when it is known again: what was kept before is not served.
    version = 2;
    expect(cache.get('q', 0)).toBeUndefined();
  });

  it('serves an answer only within the times it was stored for, and keeps none valid at no instant', () => {
    const cache = cacheOf();
    cache.store('q', 'x', 1000, cache.mark());
    expect(cache.get('q', 999)).toBe('x');
    expect(cache.get('q', 1000)).toBeUndefined();
    expect(cache.get('q', 999)).toBeUndefined();
    cache.store('r', 'y', 2000, cache.mark(), 1500);
    expect(cache.get('r', 1499)).toBeUndefined(); // a clock set back: dropped
    expect(cache.get('r', 1600)).toBeUndefined();
    cache.store('s', 'z', 1500, cache.mark(), 1500);
    expect(cache.size).toBe(0);
  });

  it('keeps at most maxEntries answers and maxSize in all, dropping the least recently used, and no answer over maxAnswerSize', () => {
    const cache = cacheOf({ maxEntries: 2, maxSize: 30, maxAnswerSize: 25 });
    const mark = cache.mark();
    cache.store('a', 'aaaaaaaaaa', Infinity, mark);
    cache.store('b', 'bbbbbbbbbb', Infinity, mark);
    expect(cache.get('a', 0)).toBe('aaaaaaaaaa'); // 'a' is now the most recently used
    cache.store('c', 'cccccccccc', Infinity, mark);
    expect(cache.size).toBe(2);
    expect(cache.get('b', 0)).toBeUndefined();
    expect(cache.get('a', 0)).toBe('aaaaaaaaaa');
    // A new answer for a kept key replaces it (its size no longer counts).
    cache.store('c', 'c again', Infinity, mark);
    expect(cache.get('c', 0)).toBe('c again');
    // 20 more would pass maxSize (10 + 7 + 20): the least recently used ('a') goes.
    cache.store('d', 'dddddddddddddddddddd', Infinity, mark);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.get('c', 0)).toBe('c again');
    cache.store('e', 'e'.repeat(26), Infinity, mark);
    expect(cache.get('e', 0)).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});
