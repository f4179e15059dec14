/**
 * Tells readers in this process that a context committed events: a live stream (Server-Sent Events) waits on
 * it instead of polling the store tightly. In-process only: a reader still polls now and then for commits of
 * other processes.
 */
export class CommitSignal {
  private waiters = new Set<() => void>();

  /** Wakes every reader waiting now. */
  notify(): void {
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const wake of waiting) wake();
  }

  /**
   * Resolves at the next commit, after `timeoutMs`, or when `abort` fires, whichever comes first (true when a
   * commit woke it).
   */
  wait(timeoutMs: number, abort?: AbortSignal): Promise<boolean> {
    if (abort?.aborted) return Promise.resolve(false);
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
