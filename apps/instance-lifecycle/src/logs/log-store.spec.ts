import { LOG_FILTER_MAX_LENGTH, selectLines } from './log-store';

describe('log selection', () => {
  const lines = ['boot', 'error: disk', 'ok', 'error: net', 'done'];
  it('filters grep-style, then keeps the tail', async () => {
    expect(await selectLines(lines, null, 'error')).toEqual(['error: disk', 'error: net']);
    expect(await selectLines(lines, 1, 'error')).toEqual(['error: net']);
    expect(await selectLines(lines, 2, null)).toEqual(['error: net', 'done']);
    expect(await selectLines(lines, null, '^(boot|done)$')).toEqual(['boot', 'done']);
    expect(await selectLines(lines, 0, null)).toEqual([]);
  });
  it('takes an invalid regular expression (or one RE2 lacks, like a back-reference) as a plain substring', async () => {
    expect(await selectLines(['a(b', 'c'], null, 'a(')).toEqual(['a(b']);
    expect(await selectLines(['x(a)\\1', 'aa'], null, '(a)\\1')).toEqual(['x(a)\\1']);
  });

  it('matches in linear time: (a+)+$ over renter-controlled lines answers at once (was 7.6 s for 27 characters)', async () => {
    const hostile = Array.from({ length: 2000 }, (_, i) => `${'a'.repeat(40 + (i % 50))}b`);
    // With a backtracking engine one of these lines alone takes hours; the test's 5 s timeout would fail.
    expect(await selectLines([...hostile, 'aaa'], null, '(a+)+$')).toEqual(['aaa']);
    expect(await selectLines(hostile, 3, '(x+x+)+y')).toEqual([]);
  });

  it('serves the event loop while it scans, and stops at its byte and time bounds, keeping the newest lines', async () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `line ${i} ${'z'.repeat(200)}`);
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    try {
      // A generous time budget: this part checks that the event loop is served, not the time bound (below).
      const all = await selectLines(many, null, 'line \\d+ z', { sliceMs: 1, budgetMs: 120_000 });
      expect(all).toHaveLength(many.length);
      expect(turns).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
    const newest = await selectLines(many, null, 'line', {
      maxScanBytes: 10 * ((many.at(-1)?.length ?? 0) + 1),
    });
    expect(newest).toEqual(many.slice(-10));
    const timeBound = await selectLines(many, null, 'line', { sliceMs: 0, budgetMs: 0 });
    expect(timeBound.length).toBeLessThan(many.length);
    expect(timeBound.at(-1)).toBe(many.at(-1));
  });

  it('refuses a filter longer than its limit with a 400', async () => {
    await expect(selectLines(lines, null, 'x'.repeat(LOG_FILTER_MAX_LENGTH + 1))).rejects.toMatchObject({
      status: 400,
    });
  });
});
