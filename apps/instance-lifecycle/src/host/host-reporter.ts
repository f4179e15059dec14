import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { isRefusal } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import type { CommandBody } from '@rigmarket/event-sourcing';
import {
  type HostReport,
  type InstanceCommand,
  instanceDecider,
  instanceStreamId,
} from '../instances/instance.decider';

/** How long a report is tried again while the store cannot take it (a database restart, say). */
export const REPORT_RETRY_WINDOW_MS = 120_000;
const retryDelayMs = (attempt: number): number => Math.min(5_000, 100 * 2 ** attempt);

/**
 * Turns a host's report into an InstanceStateChanged on the instance stream (the decider guards it). A
 * report the decider refuses is dropped with a warning; one that fails because the store is away is tried
 * again with backoff for REPORT_RETRY_WINDOW_MS: a host reports a change once, and a lost report would
 * leave the instance shown in a state its host left (its caller awaits, so one instance's reports stay in
 * order).
 */
@Injectable()
export class HostReporter implements OnApplicationShutdown {
  private readonly logger = new Logger('HostReporter');
  private stopping = false;
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  onApplicationShutdown(): void {
    this.stopping = true;
  }

  async report(instanceId: number, report: HostReport): Promise<void> {
    await this.run(instanceId, report.actualStatus, { type: 'ReportHostState', ...report });
  }

  /** A snapshot's outcome (snapshot.decider.ts): its pushed digest, or why it failed. */
  async reportSnapshot(
    instanceId: number,
    snapshotId: number,
    outcome: { digest: string | null; reason: string | null },
  ): Promise<void> {
    await this.run(instanceId, `snapshot ${snapshotId}`, { type: 'ReportSnapshot', snapshotId, ...outcome });
  }

  private async run(
    instanceId: number,
    what: string,
    command: Extract<CommandBody<InstanceCommand>, { type: 'ReportHostState' | 'ReportSnapshot' }>,
  ): Promise<void> {
    const started = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.runtime.runner.run(instanceStreamId(instanceId), instanceDecider, command, {
          correlationId: `host-report-${instanceId}`,
          causationId: `host-report-${instanceId}`,
        });
        return;
      } catch (error) {
        const refused = isRefusal(error);
        const giveUp = refused || this.stopping || Date.now() - started > REPORT_RETRY_WINDOW_MS;
        this.logger.warn(
          `report ${what} for instance ${instanceId} ${refused ? 'refused' : `failed (attempt ${attempt})`}: ${String(error)}${giveUp || refused ? '' : '; trying again'}`,
        );
        if (giveUp) return;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
      }
    }
  }
}
