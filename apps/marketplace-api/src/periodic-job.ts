import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';

/**
 * A piece of work run every `intervalMs` (0 = never by itself) and on demand with `runOnce`, one run at a
 * time: a call during a run shares it. Shutdown waits for the run in progress. (BillingMeter, ReliabilitySweep.)
 */
export abstract class PeriodicJob<T> implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;

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
    if (this.timer) clearInterval(this.timer);
    return this.running?.catch(() => undefined);
  }

  runOnce(): Promise<T> {
    this.running ??= this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
