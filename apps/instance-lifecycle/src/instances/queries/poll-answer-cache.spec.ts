import { ReadModelWatch } from '@rigmarket/event-sourcing';
import { FINISHED_SYNC_NOTICE_MS } from '../sync-maintenance-notices';
import type { JoinedInstanceRow } from './instance-rows';
import { MAX_CACHED_POLLS, PollAnswerCache, answerLapsesAt, pollAnswer } from './poll-answer-cache';

/** The poll cache's own rules: versions, liveness, lapse times and its bound (the HTTP behaviour: poll-cache.e2e-spec). */
describe('PollAnswerCache', () => {
  let version: number | null = 1;
  // A watch whose version the test moves by hand (the real one follows read-model signals).
  const watch = { tables: [], version: () => version } as unknown as ReadModelWatch;

  const text = (answer: { body: Buffer } | undefined) => answer?.body.toString('utf8');

  beforeEach(() => {
    version = 1;
  });

  it('serves an answer until its read models change, and never stores one a change overtook', () => {
    const cache = new PollAnswerCache(watch);
    const mark = cache.mark();
    cache.store(7, pollAnswer('{"a":1}'), Infinity, mark);
    expect(text(cache.get(7, 0))).toBe('{"a":1}');
    expect(cache.get(8, 0)).toBeUndefined();
    version = 2;
    expect(cache.get(7, 0)).toBeUndefined();
    const before = cache.mark();
    version = 3; // a change committed while the answer was read
    cache.store(7, pollAnswer('{"a":2}'), Infinity, before);
    expect(cache.get(7, 0)).toBeUndefined();
  });

  it('neither serves nor stores while the signals are not live', () => {
    const cache = new PollAnswerCache(watch);
    cache.store(7, pollAnswer('x'), Infinity, cache.mark());
    version = null;
    expect(cache.get(7, 0)).toBeUndefined();
    cache.store(7, pollAnswer('y'), Infinity, cache.mark());
    expect(cache.size).toBe(0);
  });

  it('drops an answer when something it shows lapses by the clock', () => {
    const cache = new PollAnswerCache(watch);
    cache.store(7, pollAnswer('x'), 1000, cache.mark());
    expect(text(cache.get(7, 999))).toBe('x');
    expect(cache.get(7, 1000)).toBeUndefined();
  });

  it('keeps at most MAX_CACHED_POLLS owners, dropping the least recently used', () => {
    const cache = new PollAnswerCache(watch);
    const mark = cache.mark();
    for (let owner = 1; owner <= MAX_CACHED_POLLS; owner += 1)
      cache.store(owner, pollAnswer(`${owner}`), Infinity, mark);
    expect(text(cache.get(1, 0))).toBe('1'); // 1 is now the most recently used
    cache.store(MAX_CACHED_POLLS + 1, pollAnswer('new'), Infinity, mark);
    expect(cache.size).toBe(MAX_CACHED_POLLS);
    expect(cache.get(2, 0)).toBeUndefined();
    expect(text(cache.get(1, 0))).toBe('1');
    expect(text(cache.get(MAX_CACHED_POLLS + 1, 0))).toBe('new');
  });

  it('lapses at the first shown window end or finished-sync notice expiry', () => {
    const row = (mwEnd: number | null, syncAt: string | null) =>
      ({ mw_end_time: mwEnd, sync_updated_at: syncAt }) as unknown as JoinedInstanceRow;
    const now = Date.parse('2026-05-01T12:00:00.000Z');
    expect(answerLapsesAt([row(null, null)], now)).toBe(Infinity);
    expect(answerLapsesAt([row(now / 1000 + 60, null), row(now / 1000 + 30, null)], now)).toBe(now + 30_000);
    const synced = '2026-05-01T11:30:00.000Z';
    expect(answerLapsesAt([row(null, synced)], now)).toBe(Date.parse(synced) + FINISHED_SYNC_NOTICE_MS);
    // A notice that already lapsed changes nothing later.
    expect(answerLapsesAt([row(null, '2026-05-01T10:00:00.000Z')], now)).toBe(Infinity);
  });
});
