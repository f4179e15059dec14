import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { metricsRegistry } from '@rigmarket/event-sourcing';
import { Counter, Histogram } from 'prom-client';

const jobRuns = new Counter({
  name: 'rigmarket_job_runs_total',
  help: 'Runs of a periodic job (job="BillingMeter": billing runs), by outcome (ok or failed)',
  labelNames: ['job', 'outcome'] as const,
  registers: [metricsRegistry],
});
const jobDuration = new Histogram({
  name: 'rigmarket_job_duration_seconds',
  help: 'How long a periodic job run took',
  labelNames: ['job'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metricsRegistry],
});
const jobItems = new Counter({
  name: 'rigmarket_job_items_total',
  help: 'What periodic job runs did: charges made (BillingMeter), machines whose reliability moved (ReliabilitySweep)',
  labelNames: ['job'] as const,
  registers: [metricsRegistry],
});

/**
 * A piece of work run every `intervalMs` (0 = never by itself) and on demand with `runOnce`, one run at a
 * time: a call during a run shares it. Shutdown waits for the run in progress; a run asked for after it is
 * refused (the app closes its database next). (BillingMeter, ReliabilitySweep.)
 */
export abstract class PeriodicJob<T> implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;
  private stopped = false;

  protected constructor(
    private readonly jobName: string,
    private readonly intervalMs: number,
  ) {
    this.logger = new Logger(jobName);
  }

  protected abstract work(): Promise<T>;

  onApplicationBootstrap(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.runOnce().catch((error: unknown) =>
        this.logger.warn(`${this.jobName} run failed: ${String(error)}`),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): Promise<unknown> | undefined {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    return this.running?.catch(() => undefined);
  }

  runOnce(): Promise<T> {
    if (this.stopped) return Promise.reject(new Error(`${this.jobName} is stopped`));
    this.running ??= this.measured().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async measured(): Promise<T> {
    const job = this.jobName;
    const end = jobDuration.startTimer({ job });
    try {
      const result = await this.work();
      jobRuns.inc({ job, outcome: 'ok' });
      if (Array.isArray(result)) jobItems.inc({ job }, result.length);
      return result;
    } catch (error) {
      jobRuns.inc({ job, outcome: 'failed' });
      throw error;
    } finally {
      end();
    }
  }
}
