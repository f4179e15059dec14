import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CloudCopyCall, EventMetadata, ScheduledCloudCopyDue } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';

/**
 * A scheduled run of a call another context serves (`cloud copy`: sync-maintenance's) is handed over as a
 * public event on a stream of its own, `scheduledcall-<jobId>-<due time in ms>`: a retried run finds the
 * event there and adds nothing, and no stream grows with the runs.
 */
export interface ScheduledRunRef {
  jobId: number;
  dueAt: string;
}

type HandOff = {
  type: 'HandOffCloudCopy';
  userId: number;
  run: ScheduledRunRef;
  call: CloudCopyCall;
  at: string;
};

export const scheduledCallDecider = {
  initialState: (): { handedOff: boolean } => ({ handedOff: false }),
  evolve: (state: { handedOff: boolean }, event: ScheduledCloudCopyDue) =>
    event.type === 'ScheduledCloudCopyDue' ? { handedOff: true } : state,
  decide: (command: HandOff, state: { handedOff: boolean }): ScheduledCloudCopyDue[] =>
    state.handedOff
      ? []
      : [
          {
            type: 'ScheduledCloudCopyDue',
            data: {
              jobId: command.run.jobId,
              userId: command.userId,
              dueAt: command.run.dueAt,
              call: command.call,
              at: command.at,
            },
          },
        ],
};

export const scheduledCallStreamId = (run: ScheduledRunRef): string =>
  `scheduledcall-${run.jobId}-${Date.parse(run.dueAt)}`;

export class HandOffCloudCopyCommand extends Command<void> {
  constructor(
    readonly userId: number,
    readonly call: CloudCopyCall,
    readonly run: ScheduledRunRef,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(HandOffCloudCopyCommand)
export class HandOffCloudCopyHandler implements ICommandHandler<HandOffCloudCopyCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ userId, call, run, metadata }: HandOffCloudCopyCommand): Promise<void> {
    await this.runtime.runner.run(
      scheduledCallStreamId(run),
      scheduledCallDecider,
      { type: 'HandOffCloudCopy', userId, run, call },
      metadata,
    );
  }
}
