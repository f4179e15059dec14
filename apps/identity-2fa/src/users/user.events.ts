import type {
  DomainEvent,
  UserEmailVerified,
  UserProfileUpdated,
  UserRegistered,
} from '@rigmarket/contracts';

export type { UserEmailVerified, UserRegistered, UserProfileUpdated };

/** Private: the hash stays in identity's store and never reaches the outbox. */
export type UserPasswordSet = DomainEvent<'UserPasswordSet', { userId: number; passwordHash: string }>;
export type UserEmailVerificationRequested = DomainEvent<
  'UserEmailVerificationRequested',
  { userId: number; tokenHash: string; expiresAt: string }
>;
export type UserLoggedIn = DomainEvent<'UserLoggedIn', { userId: number; sessionKeyId: number; at: string }>;

export type UserEvent =
  | UserRegistered
  | UserPasswordSet
  | UserEmailVerificationRequested
  | UserEmailVerified
  | UserProfileUpdated
  | UserLoggedIn;
