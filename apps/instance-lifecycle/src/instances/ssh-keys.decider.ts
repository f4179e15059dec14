import { DomainError, type InstanceEvent, MAX_INSTANCE_SSH_KEYS } from '@rigmarket/contracts';
import { type InstanceCommand, InstanceErrors } from './instance.commands';
import type { InstanceState } from './instance.state';

type SshKeyCommand = Extract<InstanceCommand, { type: 'AttachSshKey' | 'DetachSshKey' }>;
type LiveInstance = Exclude<InstanceState, { status: 'none' }>;

export const isSshKeyCommand = (command: InstanceCommand): command is SshKeyCommand =>
  command.type === 'AttachSshKey' || command.type === 'DetachSshKey';

/**
 * Part of the instance decider (instance.decider.ts): the renter's SSH public keys of one instance
 * (`vastai attach ssh` / `detach ssh`), given the instance the renter owns. Attaching a key the instance
 * already holds changes nothing (the CLI may repeat it); at most MAX_INSTANCE_SSH_KEYS at once.
 */
export function decideSshKey(command: SshKeyCommand, instance: LiveInstance): InstanceEvent[] {
  const { instanceId } = instance;
  if (command.type === 'AttachSshKey') {
    if (instance.sshKeys.some((k) => k.publicKey === command.publicKey)) return [];
    if (instance.sshKeys.length >= MAX_INSTANCE_SSH_KEYS)
      throw new DomainError(
        InstanceErrors.tooManySshKeys,
        `Instance ${instanceId} already holds ${MAX_INSTANCE_SSH_KEYS} SSH keys; detach one first`,
        { limit: MAX_INSTANCE_SSH_KEYS },
      );
    const keyId = instance.nextSshKeyId;
    return [
      {
        type: 'InstanceSshKeyAttached',
        data: { instanceId, keyId, publicKey: command.publicKey, at: command.at },
      },
    ];
  }
  if (!instance.sshKeys.some((k) => k.keyId === command.keyId))
    throw new DomainError(
      InstanceErrors.sshKeyNotFound,
      `Instance ${instanceId} has no SSH key ${command.keyId}`,
    );
  return [{ type: 'InstanceSshKeyDetached', data: { instanceId, keyId: command.keyId, at: command.at } }];
}
