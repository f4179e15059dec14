import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { type EventMetadata, parsePublicKey } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { runInstanceCommand } from '../instance-commands';

export interface AttachedSshKey {
  id: number;
  instance_id: number;
  ssh_key: string;
}

/** `vastai attach ssh <instance> <key>`: one OpenSSH public key line onto the renter's instance. */
export class AttachInstanceSshKeyCommand extends Command<AttachedSshKey> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly sshKey: unknown,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** `vastai detach ssh <instance> <key id>`. */
export class DetachInstanceSshKeyCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly keyId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * The instance's keys are decided on its stream (ssh-keys.decider.ts); the new list reaches the host as an
 * `ssh_keys` host command written in the same transaction (host-commands.ts).
 */
@CommandHandler(AttachInstanceSshKeyCommand)
export class AttachInstanceSshKeyHandler implements ICommandHandler<AttachInstanceSshKeyCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({
    requesterId,
    instanceId,
    sshKey,
    metadata,
  }: AttachInstanceSshKeyCommand): Promise<AttachedSshKey> {
    const publicKey = parsePublicKey(sshKey);
    const { state } = await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'AttachSshKey', requesterId, publicKey },
      metadata,
    );
    // Attaching a key the instance holds already answers the key it has (no new event).
    const key = state.status === 'none' ? undefined : state.sshKeys.find((k) => k.publicKey === publicKey);
    return { id: key?.keyId ?? 0, instance_id: instanceId, ssh_key: publicKey };
  }
}

@CommandHandler(DetachInstanceSshKeyCommand)
export class DetachInstanceSshKeyHandler implements ICommandHandler<DetachInstanceSshKeyCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, keyId, metadata }: DetachInstanceSshKeyCommand): Promise<void> {
    await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'DetachSshKey', requesterId, keyId },
      metadata,
    );
  }
}
