import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { type EventMetadata, parsePublicKey } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { SSH_KEYS_TABLE, type SshKeyView, findSshKey } from '../read-models/ssh-keys/queries';
import { sshKeyDecider, sshKeyStreamId } from './ssh-key.decider';

export class AddSshKeyCommand extends Command<SshKeyView> {
  constructor(
    readonly userId: number,
    readonly publicKey: unknown,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

export class ReplaceSshKeyCommand extends Command<SshKeyView> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
    readonly publicKey: unknown,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

export class DeleteSshKeyCommand extends Command<void> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** Add, replace and delete an account's SSH public keys (one stream per key). */
@CommandHandler(AddSshKeyCommand)
export class AddSshKeyHandler implements ICommandHandler<AddSshKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ userId, publicKey, metadata }: AddSshKeyCommand): Promise<SshKeyView> {
    const key = parsePublicKey(publicKey);
    await enforceQuota(
      this.runtime.db,
      QUOTAS.sshKeys,
      `SELECT count(*) AS n FROM ${SSH_KEYS_TABLE} WHERE user_id = $1 AND deleted_at IS NULL`,
      [userId],
    );
    const keyId = await this.runtime.nextId('ssh_key_ids');
    await this.runtime.runner.run(
      sshKeyStreamId(keyId),
      sshKeyDecider,
      { type: 'AddSshKey', keyId, userId, publicKey: key },
      metadata,
    );
    return (await findSshKey(this.runtime.db, userId, keyId))!;
  }
}

@CommandHandler(ReplaceSshKeyCommand)
export class ReplaceSshKeyHandler implements ICommandHandler<ReplaceSshKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ userId, keyId, publicKey, metadata }: ReplaceSshKeyCommand): Promise<SshKeyView> {
    const key = parsePublicKey(publicKey);
    await this.runtime.runner.run(
      sshKeyStreamId(keyId),
      sshKeyDecider,
      { type: 'ReplaceSshKey', requesterUserId: userId, publicKey: key },
      metadata,
    );
    return (await findSshKey(this.runtime.db, userId, keyId))!;
  }
}

@CommandHandler(DeleteSshKeyCommand)
export class DeleteSshKeyHandler implements ICommandHandler<DeleteSshKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ userId, keyId, metadata }: DeleteSshKeyCommand): Promise<void> {
    await this.runtime.runner.run(
      sshKeyStreamId(keyId),
      sshKeyDecider,
      { type: 'DeleteSshKey', requesterUserId: userId },
      metadata,
    );
  }
}
