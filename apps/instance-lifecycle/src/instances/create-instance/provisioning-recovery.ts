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
  /** How often open rents are looked through (0: never; `sweep()` still works). */
  intervalMs: number;
}

export const DEFAULT_PROVISIONING_RECOVERY: ProvisioningRecoveryOptions = {
  staleAfterMs: 30_000,
  intervalMs: 10_000,
};

export const INTERRUPTED_REASON = 'interrupted: the rent made no progress (its process stopped)';

/**
 * Finishes the rents a crash interrupted (docs/architecture.md, Workflows): each open provisioning
 * workflow (read model `open_provisionings`) with no event for `staleAfterMs` is given up from what its
 * stream recorded, which releases GPUs allocated to an instance that was never created. A rent still
 * running in another process loses the race cleanly: its next step is refused (`provisioning_ended`,
 * expected version on the workflow's stream) and its renter is told to rent again.
 */
@Injectable()
export class ProvisioningRecovery implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ProvisioningRecovery');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(PROVISIONING_RECOVERY_OPTIONS) private readonly options: ProvisioningRecoveryOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.logger.warn(`open rents not looked through: ${(error as Error).message}`),
      );
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Gives up the stale open rents (all open ones with `staleAfterMs` 0), one sweep at a time; answers how many. */
  sweep(staleAfterMs = this.options.staleAfterMs): Promise<number> {
    const previous = this.running?.catch(() => 0) ?? Promise.resolve(0);
    const next = previous.then(() => this.giveUpStale(staleAfterMs));
    this.running = next;
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
