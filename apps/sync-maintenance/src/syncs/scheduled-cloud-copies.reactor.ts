import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { type ScheduledCloudCopyDue, refusalCode } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { SYNC_RUNTIME } from '../sync-maintenance.tokens';
import { StartSyncCommand } from './syncs.handlers';

/**
 * `vastai cloud copy --schedule`: instance-lifecycle stores the account's scheduled jobs and, when a cloud
 * copy's run comes due, hands it over as ScheduledCloudCopyDue (once per run). Here it starts as if the account
 * had just called POST commands/rclone/, with the route's checks: an instance or a connection that is no
 * longer the account's, or a copy still running on the instance, refuses that run (logged; the next run
 * tries again). Queued from the delivery and run after it (ADR 0009).
 */
@Injectable()
export class ScheduledCloudCopiesReactor implements Reactor<ScheduledCloudCopyDue>, OnApplicationBootstrap {
  readonly name = 'scheduled_cloud_copies';
  readonly sources = [{ context: 'instance', streamType: 'scheduledcall' }] as const;
  readonly eventTypes = ['ScheduledCloudCopyDue'] as const;
  private readonly logger = new Logger('ScheduledCloudCopies');

  constructor(
    @Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<ScheduledCloudCopyDue>): Promise<void> {
    const { userId, jobId, dueAt, call } = event.data;
    const metadata = { ...causedBy(event), actor: { userId } };
    try {
      await this.commands.execute(
        new StartSyncCommand(userId, { kind: 'rclone', srcInstanceId: null, ...call }, metadata),
      );
    } catch (error) {
      const code = refusalCode(error);
      if (code === undefined) throw error;
      this.logger.warn(
        `scheduled job ${jobId} (due ${dueAt}): cloud copy on instance ${call.instanceId} refused: ${code}`,
      );
    }
  }
}
