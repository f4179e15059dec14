import { selectLines } from './log-store';

describe('log selection', () => {
  const lines = ['boot', 'error: disk', 'ok', 'error: net', 'done'];
  it('filters grep-style, then keeps the tail', () => {
    expect(selectLines(lines, null, 'error')).toEqual(['error: disk', 'error: net']);
    expect(selectLines(lines, 1, 'error')).toEqual(['error: net']);
    expect(selectLines(lines, 2, null)).toEqual(['error: net', 'done']);
    expect(selectLines(lines, null, '^(boot|done)$')).toEqual(['boot', 'done']);
    expect(selectLines(lines, 0, null)).toEqual([]);
  });
  it('takes an invalid regular expression as a plain substring', () => {
    expect(selectLines(['a(b', 'c'], null, 'a(')).toEqual(['a(b']);
  });
});
