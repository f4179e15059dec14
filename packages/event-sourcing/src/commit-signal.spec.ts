import { CommitSignal } from './commit-signal';

describe('CommitSignal: what a live stream waits on', () => {
  it('wakes a waiting reader at the next commit', async () => {
    const signal = new CommitSignal();
    const woken = signal.wait(10_000);
    signal.notify();
    expect(await woken).toBe(true);
    expect(signal.waiting).toBe(0);
  });

  it('does not sleep through a commit signalled while the reader was reading', async () => {
    const signal = new CommitSignal();
    const seen = signal.count;
    signal.notify(); // a commit during the read
    const started = Date.now();
    expect(await signal.wait(10_000, undefined, seen)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('gives up after its timeout or when aborted, without a commit', async () => {
    const signal = new CommitSignal();
    expect(await signal.wait(10)).toBe(false);
    const abort = new AbortController();
    const waiting = signal.wait(10_000, abort.signal);
    abort.abort();
    expect(await waiting).toBe(false);
    expect(signal.waiting).toBe(0);
  });
});
