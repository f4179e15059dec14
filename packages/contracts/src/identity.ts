import type { DomainEvent } from './envelope';
import type { KeyScope } from './permissions';

/**
 * Public (integration) events of the identity-2fa context. Other contexts may project these.
 * Secrets never travel: keys as sha256 hashes only, passwords not at all.
 */
export type ApiKeyKind = 'api' | 'session' | 'instance';

export type ApiKeyCreated = DomainEvent<
  'ApiKeyCreated',
  {
    keyId: number;
    userId: number;
    name: string | null;
    /** hex sha256 of the key value */
    keyHash: string;
    /** null = full access */
    permissions: KeyScope;
    kind: ApiKeyKind;
    createdAt: string;
    /** Sessions from a login: when the key stops authenticating (absent: never). */
    expiresAt?: string;
  }
>;
export type ApiKeyReset = DomainEvent<'ApiKeyReset', { keyId: number; keyHash: string; resetAt: string }>;
export type ApiKeyDeleted = DomainEvent<'ApiKeyDeleted', { keyId: number; deletedAt: string }>;
export type ApiKeyEvent = ApiKeyCreated | ApiKeyReset | ApiKeyDeleted;

export type UserRegistered = DomainEvent<
  'UserRegistered',
  {
    userId: number;
    email: string;
    username: string | null;
    fullName: string | null;
    isAdmin: boolean;
    registeredAt: string;
  }
>;
export type UserEmailVerified = DomainEvent<'UserEmailVerified', { userId: number; verifiedAt: string }>;
export type UserProfileUpdated = DomainEvent<
  'UserProfileUpdated',
  { userId: number; fullName?: string | null; sshKey?: string | null }
>;

export type TeamRoleCreated = DomainEvent<
  'TeamRoleCreated',
  { roleId: number; name: string; permissions: string[]; builtIn: boolean }
>;
export type TeamRoleUpdated = DomainEvent<
  'TeamRoleUpdated',
  { roleId: number; name: string; permissions: string[] }
>;
export type TeamRoleDeleted = DomainEvent<'TeamRoleDeleted', { roleId: number; name: string }>;

export const IdentityPublicEvents = {
  ApiKeyCreated: { schemaVersion: 1, streamType: 'api_key' },
  ApiKeyReset: { schemaVersion: 1, streamType: 'api_key' },
  ApiKeyDeleted: { schemaVersion: 1, streamType: 'api_key' },
  UserRegistered: { schemaVersion: 1, streamType: 'user' },
  UserEmailVerified: { schemaVersion: 1, streamType: 'user' },
  UserProfileUpdated: { schemaVersion: 1, streamType: 'user' },
  TeamRoleCreated: { schemaVersion: 1, streamType: 'team_role' },
  TeamRoleUpdated: { schemaVersion: 1, streamType: 'team_role' },
  TeamRoleDeleted: { schemaVersion: 1, streamType: 'team_role' },
} as const;
