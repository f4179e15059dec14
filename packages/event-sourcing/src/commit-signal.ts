/**
 * Tells readers in this process that a context committed events: a live stream (Server-Sent Events) waits on
 * it instead of polling the store tightly. In-process only: a reader still polls now and then for commits of
 * other processes.
 */
export class CommitSignal {
  private waiters = new Set<() => void>();
  private commits = 0;

  /** How many commits were signalled so far: a reader notes it before it reads, and passes it to `wait`. */
  get count(): number {
    return this.commits;
  }

  /** Wakes every reader waiting now. */
  notify(): void {
    this.commits += 1;
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const wake of waiting) wake();
  }

  /**
   * Resolves at the next commit, after `timeoutMs`, or when `abort` fires, whichever comes first (true when a
   * commit woke it). With `seen` (the `count` noted before the reader's last read), a commit signalled since
   * then resolves it at once: a commit during the read is not slept through.
   */
  wait(timeoutMs: number, abort?: AbortSignal, seen?: number): Promise<boolean> {
    if (abort?.aborted) return Promise.resolve(false);
    if (seen !== undefined && seen !== this.commits) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (committed: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        abort?.removeEventListener('abort', aborted);
        resolve(committed);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(wake);
      abort?.addEventListener('abort', aborted, { once: true });
    });
  }

  /** How many readers wait now (for tests and shutdown checks). */
  get waiting(): number {
    return this.waiters.size;
  }
}
