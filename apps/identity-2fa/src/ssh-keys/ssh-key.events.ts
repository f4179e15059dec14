import type { DomainEvent } from '@rigmarket/contracts';

/**
 * Events of an account's SSH public key (`ssh_key-<id>`). Private to identity-2fa for now: no other
 * context reads them (a public key is no secret; they can be published when one needs them).
 */
export type SshKeyAdded = DomainEvent<
  'SshKeyAdded',
  { keyId: number; userId: number; publicKey: string; at: string }
>;
export type SshKeyReplaced = DomainEvent<'SshKeyReplaced', { keyId: number; publicKey: string; at: string }>;
export type SshKeyDeleted = DomainEvent<'SshKeyDeleted', { keyId: number; at: string }>;
export type SshKeyEvent = SshKeyAdded | SshKeyReplaced | SshKeyDeleted;
