import { parseOfferQuery } from './offer-query';
import {
  MaintenanceWindowsCache,
  OfferSearchCache,
  type PendingWindows,
  type TimedAnswer,
  cacheableQuery,
} from './offer-search-cache';

/** A read model's version moved by hand; null while "the listener is down". */
class Version {
  value: number | null = 1;
  version(): number | null {
    return this.value;
  }
  bump(): void {
    this.value = (this.value ?? 0) + 1;
  }
}

/** A search that answers its call number, so a test sees whether it ran. */
function counting(changesAtMs = Number.POSITIVE_INFINITY) {
  let calls = 0;
  const search = async (): Promise<TimedAnswer> => {
    calls += 1;
    return { text: `answer ${calls}`, changesAtMs };
  };
  return { search, calls: () => calls };
}

const T = 1_780_000_000_000;

describe('offer search answer cache', () => {
  it('answers an unchanged read model from memory for at most maxAgeMs', async () => {
    const cache = new OfferSearchCache(new Version());
    const s = counting();
    expect((await cache.answer('q', T, s.search)).text).toBe('answer 1');
    const hit = await cache.answer('q', T + 999, s.search);
    expect(hit.text).toBe('answer 1');
    // The same object for every hit of an entry (the route computes its ETag once).
    expect(await cache.answer('q', T + 999, s.search)).toBe(hit);
    expect((await cache.answer('q', T + 1000, s.search)).text).toBe('answer 2');
    expect(s.calls()).toBe(2);
    expect(cache.hits).toBe(2);
  });

  it('never serves past the instant at which time changes the answer', async () => {
    const cache = new OfferSearchCache(new Version());
    const s = counting(T + 250);
    await cache.answer('q', T, s.search);
    expect((await cache.answer('q', T + 249, s.search)).text).toBe('answer 1');
    expect((await cache.answer('q', T + 250, s.search)).text).toBe('answer 2');
    // An answer whose change is now (or past) is not kept at all.
    const late = counting(T + 1000);
    await cache.answer('r', T + 1000, late.search);
    expect((await cache.answer('r', T + 1000, late.search)).text).toBe('answer 2');
  });

  it('drops an entry when the read model changes, and serves nothing while its version is unknown', async () => {
    const version = new Version();
    const cache = new OfferSearchCache(version);
    const s = counting();
    await cache.answer('q', T, s.search);
    version.bump();
    expect((await cache.answer('q', T + 1, s.search)).text).toBe('answer 2');
    expect((await cache.answer('q', T + 2, s.search)).text).toBe('answer 2');
    version.value = null;
    expect((await cache.answer('q', T + 3, s.search)).text).toBe('answer 3');
    expect((await cache.answer('q', T + 4, s.search)).text).toBe('answer 4');
    expect(cache.size).toBe(1);
  });

  it('does not keep an answer when the read model changed while the search ran', async () => {
    const version = new Version();
    const cache = new OfferSearchCache(version);
    let calls = 0;
    const search = async (): Promise<TimedAnswer> => {
      calls += 1;
      if (calls === 1) version.bump();
      return { text: `answer ${calls}`, changesAtMs: Number.POSITIVE_INFINITY };
    };
    expect((await cache.answer('q', T, search)).text).toBe('answer 1');
    expect((await cache.answer('q', T + 1, search)).text).toBe('answer 2');
    expect((await cache.answer('q', T + 2, search)).text).toBe('answer 2');
  });

  it('does not serve an entry to a clock set back before it was computed', async () => {
    const cache = new OfferSearchCache(new Version());
    const s = counting();
    await cache.answer('q', T, s.search);
    expect((await cache.answer('q', T - 1, s.search)).text).toBe('answer 2');
  });

  it('lets concurrent misses of one query wait for one search', async () => {
    const cache = new OfferSearchCache(new Version());
    let release: () => void = () => undefined;
    let calls = 0;
    const search = async (): Promise<TimedAnswer> => {
      calls += 1;
      await new Promise<void>((resolve) => (release = resolve));
      return { text: 'slow answer', changesAtMs: Number.POSITIVE_INFINITY };
    };
    const answers = [cache.answer('q', T, search), cache.answer('q', T + 1, search)];
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const [one, two] = await Promise.all(answers);
    expect([one!.text, two!.text]).toEqual(['slow answer', 'slow answer']);
    // The same answer object: what the route derives from it (the ETag) is computed once.
    expect(two).toBe(one);
    expect(calls).toBe(1);
  });

  it('keeps at most maxEntries answers and maxChars of text, dropping the least recently used', async () => {
    const cache = new OfferSearchCache(new Version(), { maxAgeMs: 1000, maxEntries: 2, maxChars: 30 });
    const text = (t: string) => async (): Promise<TimedAnswer> => ({
      text: t,
      changesAtMs: Number.POSITIVE_INFINITY,
    });
    await cache.answer('a', T, text('aaaaaaaaaa'));
    await cache.answer('b', T, text('bbbbbbbbbb'));
    await cache.answer('a', T, text('a again'));
    await cache.answer('c', T, text('cccccccccc'));
    expect(cache.size).toBe(2);
    expect((await cache.answer('a', T, text('a fresh'))).text).toBe('aaaaaaaaaa');
    expect((await cache.answer('b', T, text('b fresh'))).text).toBe('b fresh');
    // 20 more characters would pass maxChars (10 + 7 + 20): the least recently used ('a') goes.
    await cache.answer('d', T, text('dddddddddddddddddddd'));
    expect(cache.size).toBe(2);
    expect((await cache.answer('b', T, text('b again'))).text).toBe('b fresh');
    expect((await cache.answer('a', T, text('a last'))).text).toBe('a last');
    // An answer longer than maxChars is served but never kept.
    expect((await cache.answer('e', T, text('e'.repeat(31)))).text).toHaveLength(31);
    expect((await cache.answer('e', T, text('e fresh'))).text).toBe('e fresh');
  });

  it('answers fresh, every time, a query whose answer time changes between any two instants', () => {
    expect(cacheableQuery(parseOfferQuery({ rentable: { eq: true }, num_gpus: { gte: 2 } }))).toBe(true);
    expect(cacheableQuery(parseOfferQuery({ order: [['duration', 'desc']] }))).toBe(true);
    expect(cacheableQuery(parseOfferQuery({ duration: { gte: 86_400 } }))).toBe(false);
    expect(cacheableQuery(parseOfferQuery({ rentable: { eq: false } }))).toBe(false);
    expect(cacheableQuery(parseOfferQuery({ rentable: { neq: true } }))).toBe(false);
    expect(cacheableQuery(parseOfferQuery({ order: [['rentable', 'desc']] }))).toBe(false);
  });
});

describe('maintenance windows kept for searches', () => {
  /** A read of the windows table that answers what `table` holds now, counting its calls. */
  function windowsTable(changesAt: number | null) {
    const table: PendingWindows = { machineIds: [7], starts: [T / 1000 + 3600], changesAt };
    let reads = 0;
    const read = async (): Promise<PendingWindows> => {
      reads += 1;
      return { ...table, machineIds: [...table.machineIds] };
    };
    return { table, read, reads: () => reads };
  }

  it('reads the windows once while their table is unchanged, for at most maxAgeMs', async () => {
    const version = new Version();
    const cache = new MaintenanceWindowsCache(version, 1000);
    const t = windowsTable(T / 1000 + 3600);
    expect((await cache.at(T, t.read)).machineIds).toEqual([7]);
    expect((await cache.at(T + 999, t.read)).machineIds).toEqual([7]);
    expect(t.reads()).toBe(1);
    // A window scheduled since: the table's version moved, so the next search reads it.
    t.table.machineIds = [7, 8];
    version.bump();
    expect((await cache.at(T + 999, t.read)).machineIds).toEqual([7, 8]);
    expect(t.reads()).toBe(2);
    // Unchanged, but older than maxAgeMs: read again (a change another process committed is seen by then).
    expect((await cache.at(T + 999 + 1000, t.read)).machineIds).toEqual([7, 8]);
    expect(t.reads()).toBe(3);
  });

  it('reads again once a window starts or ends, when the clock goes back, and always while changes may go unseen', async () => {
    const version = new Version();
    const cache = new MaintenanceWindowsCache(version, 60_000);
    const t = windowsTable(T / 1000 + 10);
    await cache.at(T, t.read);
    await cache.at(T + 9_999, t.read);
    expect(t.reads()).toBe(1);
    // At the window's start the windows of `now` may differ (a machine's next start, an ended window).
    await cache.at(T + 10_000, t.read);
    expect(t.reads()).toBe(2);
    await cache.at(T + 5_000, t.read);
    expect(t.reads()).toBe(3);
    version.value = null;
    await cache.at(T + 5_000, t.read);
    await cache.at(T + 5_000, t.read);
    expect(t.reads()).toBe(5);
  });

  it('keeps nothing read while the table changed', async () => {
    const version = new Version();
    const cache = new MaintenanceWindowsCache(version, 60_000);
    const t = windowsTable(null);
    await cache.at(T, async () => {
      const read = await t.read();
      version.bump();
      return read;
    });
    await cache.at(T, t.read);
    await cache.at(T, t.read);
    expect(t.reads()).toBe(2);
  });
});
