import { PeriodicJob } from './periodic-job';

/** A job that counts its runs; each run waits until `finish` is called. */
class CountingJob extends PeriodicJob<number> {
  runs = 0;
  private release: (() => void) | undefined;

  constructor() {
    super('CountingJob', 0);
  }

  finish(): void {
    this.release?.();
  }

  protected async work(): Promise<number> {
    this.runs += 1;
    await new Promise<void>((resolve) => (this.release = resolve));
    return this.runs;
  }
}

describe('PeriodicJob', () => {
  it('given a run in progress, when the app shuts down, then shutdown waits for it and a run asked for afterwards is refused and starts no work', async () => {
    const job = new CountingJob();
    job.onApplicationBootstrap();
    const first = job.runOnce();
    // A call during a run shares it.
    expect(job.runOnce()).toBe(first);
    let stopped = false;
    const shutdown = Promise.resolve(job.onApplicationShutdown()).then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    job.finish();
    await expect(first).resolves.toBe(1);
    await shutdown;
    await expect(job.runOnce()).rejects.toThrow('CountingJob is stopped');
    expect(job.runs).toBe(1);
  });
});
