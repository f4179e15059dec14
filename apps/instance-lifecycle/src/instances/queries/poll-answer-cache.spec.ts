import { ReadModelWatch } from '@rigmarket/event-sourcing';
import { FINISHED_SYNC_NOTICE_MS } from '../sync-maintenance-notices';
import type { JoinedInstanceRow } from './instance-rows';
import { MAX_CACHED_POLLS, PollAnswerCache, answerLapsesAt, pollAnswer } from './poll-answer-cache';

/**
 * The poll cache's own rules: its bound by owners and its lapse times (the rules of every read-model answer cache:
 * versioned-answer-cache.spec in event-sourcing; the HTTP behaviour: poll-cache.e2e-spec).
 */
describe('PollAnswerCache', () => {
  // A watch whose read models never change (the real one follows read-model signals).
  const watch = { tables: [], version: () => 1 } as unknown as ReadModelWatch;

  const text = (answer: { body: Buffer } | undefined) => answer?.body.toString('utf8');

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
