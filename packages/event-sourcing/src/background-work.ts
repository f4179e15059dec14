/**
 * The work a background loop of a provider has started (a sweep, an agent's queued message) and not finished:
 * `stop()` refuses new work and resolves once all of it ended, so that an app's close() resolves only after
 * the last statement of its loops (the database closes next; a statement later fails, see Database.close).
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();
  private stopped = false;

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Runs `work` now and tracks it until it settles; after stop() nothing runs and it answers undefined. */
  run<T>(work: () => Promise<T>): Promise<T | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const running = work();
    this.pending.add(running);
    void running.then(
      () => this.pending.delete(running),
      () => this.pending.delete(running),
    );
    return running;
  }

  /** Refuses new work and waits for the work in progress (and what it started meanwhile) to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
