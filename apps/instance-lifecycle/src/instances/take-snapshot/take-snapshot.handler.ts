import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME, PENDING_KEY_BOX } from '../../instance-lifecycle.tokens';
import { runInstanceCommand } from '../instance-commands';
import type { PendingKeyBox } from '../pending-keys';
import type { SnapshotRequest } from './snapshot-request';

/** `vastai take snapshot <instance> --repo ...`: the host commits the container and pushes it. */
export class TakeSnapshotCommand extends Command<{ snapshotId: number; image: string }> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly request: SnapshotRequest,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * Decided on the instance's stream (snapshot.decider.ts); the host learns of it from the `snapshot` host
 * command written in the same transaction, which alone carries the registry login, sealed like a
 * provision's (PendingKeyBox.sealLogin) and cleared once delivered: no event holds it.
 */
@CommandHandler(TakeSnapshotCommand)
export class TakeSnapshotHandler implements ICommandHandler<TakeSnapshotCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(PENDING_KEY_BOX) private readonly keys: PendingKeyBox,
  ) {}

  async execute({ requesterId, instanceId, request, metadata }: TakeSnapshotCommand) {
    const { decided } = await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'TakeSnapshot', requesterId, image: request.image, pause: request.pause },
      metadata,
      request.auth ? { sealedImageLogin: this.keys.sealLogin(JSON.stringify(request.auth), instanceId) } : {},
    );
    const requested = decided.find((e) => e.type === 'InstanceSnapshotRequested');
    return {
      snapshotId: requested?.type === 'InstanceSnapshotRequested' ? requested.data.snapshotId : 0,
      image: request.image,
    };
  }
}
