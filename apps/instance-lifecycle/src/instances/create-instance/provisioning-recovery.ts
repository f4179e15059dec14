import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME, PROVISIONING_RECOVERY_OPTIONS } from '../../instance-lifecycle.tokens';
import { SCHEMA } from '../../schema';
import { compensateProvisioning } from './provisioning';

export interface ProvisioningRecoveryOptions {
  /** A rent whose workflow made no progress for this long was interrupted (its process died): given up. */
  staleAfterMs: number;
  /**
   * The longest wait between two looks through the open rents (0: never; `sweep()` still works). While a
   * rent is open, the next look is when the oldest one would fall stale (no sooner than 5 s apart).
   */
  intervalMs: number;
}

export const DEFAULT_PROVISIONING_RECOVERY: ProvisioningRecoveryOptions = {
  staleAfterMs: 30_000,
  intervalMs: 60_000,
};

/** The shortest wait between two scheduled sweeps. */
const MIN_SWEEP_GAP_MS = 5_000;

export const INTERRUPTED_REASON = 'interrupted: the rent made no progress (its process stopped)';

/**
 * Finishes the rents a crash interrupted (docs/architecture.md, Workflows): each open provisioning
 * workflow (read model `open_provisionings`) with no event for `staleAfterMs` is given up from what its
 * stream recorded, which releases GPUs allocated to an instance that was never created. Rents now record
 * their whole workflow in one transaction and never stay open; what it finds are rents an older release
 * left between its two transactions (a late step of one is refused: `provisioning_ended`).
 */
@Injectable()
export class ProvisioningRecovery implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ProvisioningRecovery');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** The scheduled look in progress (its sweep, then the query for the next one): shutdown waits for it. */
  private scheduled: Promise<number> | undefined;
  private stopped = false;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(PROVISIONING_RECOVERY_OPTIONS) private readonly options: ProvisioningRecoveryOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.options.intervalMs <= 0) return;
    const schedule = (ms: number): void => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.scheduled = this.sweep()
          .catch((error: unknown) => {
            this.logger.warn(`open rents not looked through: ${(error as Error).message}`);
          })
          .then(() => (this.stopped ? this.options.intervalMs : this.nextSweepInMs()))
          .catch(() => this.options.intervalMs);
        void this.scheduled.then(schedule);
      }, ms);
      this.timer.unref();
    };
    // The first look soon after start: a crash may have left rents open.
    schedule(Math.min(this.options.intervalMs, 10_000));
  }

  /**
   * When the oldest open rent would fall stale (capped by intervalMs, no sooner than 5 s): the next sweep has
   * work only then.
   */
  async nextSweepInMs(): Promise<number> {
    const [oldest] = await this.runtime.db.query<{ updated_at: Date | string | null }>(
      `SELECT min(updated_at) AS updated_at FROM ${SCHEMA}.open_provisionings`,
    );
    if (!oldest?.updated_at) return this.options.intervalMs;
    const staleAt = new Date(oldest.updated_at).getTime() + this.options.staleAfterMs;
    const ms = staleAt - this.runtime.runner.clock.now().getTime();
    return Math.min(this.options.intervalMs, Math.max(MIN_SWEEP_GAP_MS, ms));
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.scheduled;
    await this.running?.catch(() => undefined);
  }

  /**
   * Gives up the stale open rents (all open ones with `staleAfterMs` 0), one sweep at a time; answers how many.
   * Refused after shutdown (the app closes its database next): no sweep starts then, queued ones included.
   */
  sweep(staleAfterMs = this.options.staleAfterMs): Promise<number> {
    const start = (): Promise<number> =>
      this.stopped
        ? Promise.reject(new Error('provisioning recovery is stopped'))
        : this.giveUpStale(staleAfterMs);
    // Started at once when none runs (so a shutdown right after waits for it), else after the running one.
    const next = this.running ? this.running.catch(() => 0).then(start) : start();
    this.running = next;
    void next
      .catch(() => undefined)
      .then(() => {
        if (this.running === next) this.running = undefined;
      });
    return next;
  }

  private async giveUpStale(staleAfterMs: number): Promise<number> {
    const before = new Date(this.runtime.runner.clock.now().getTime() - staleAfterMs);
    const stale = await this.runtime.db.query<{ instance_id: number }>(
      `SELECT instance_id FROM ${SCHEMA}.open_provisionings WHERE updated_at <= $1 ORDER BY instance_id LIMIT 100`,
      [before.toISOString()],
    );
    for (const { instance_id } of stale) {
      const instanceId = Number(instance_id);
      const metadata = { correlationId: `provisioning-${instanceId}`, causationId: 'provisioning-recovery' };
      await compensateProvisioning(this.runtime, instanceId, INTERRUPTED_REASON, metadata);
      this.logger.log(`rent of instance ${instanceId} was interrupted; what it allocated is released`);
    }
    return stale.length;
  }
}
