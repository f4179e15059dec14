import { newLogLines, oneLine } from './log-follow';

describe('newLogLines: the lines of a whole log copy not sent yet', () => {
  it('sends everything the first time', () => {
    expect(newLogLines(['a', 'b'], 0, null)).toEqual(['a', 'b']);
  });

  it('sends only what was appended since', () => {
    expect(newLogLines(['a', 'b', 'c', 'd'], 2, 'b')).toEqual(['c', 'd']);
    expect(newLogLines(['a', 'b'], 2, 'b')).toEqual([]);
  });

  it('goes on after the last line sent when the host cut the head of its copy', () => {
    expect(newLogLines(['b', 'c', 'd', 'e'], 3, 'c')).toEqual(['d', 'e']);
  });

  it('sends the whole copy when it no longer holds the last line sent (the container was recreated)', () => {
    expect(newLogLines(['x', 'y'], 3, 'c')).toEqual(['x', 'y']);
  });

  it('resumes after a count of lines without knowing the last line (Last-Event-ID)', () => {
    expect(newLogLines(['a', 'b', 'c'], 2, null)).toEqual(['c']);
  });

  it('sends a redrawn line (a progress bar) as it was shown last', () => {
    expect(oneLine('10%\r50%\r100%\r')).toBe('100%');
    expect(oneLine('plain')).toBe('plain');
  });
});
