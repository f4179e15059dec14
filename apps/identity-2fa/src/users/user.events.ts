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
/**
 * The account's own settings (`vastai set user`): billing address, phone number and balance thresholds.
 * Private: personal data stays in identity's store and never reaches the outbox.
 */
export interface UserSettings {
  billaddress_name?: string | null;
  billaddress_line1?: string | null;
  billaddress_line2?: string | null;
  billaddress_city?: string | null;
  billaddress_zip?: string | null;
  billaddress_country?: string | null;
  billaddress_taxinfo?: string | null;
  phone_number?: string | null;
  balance_threshold_enabled?: boolean;
  balance_threshold?: number;
  autobill_threshold?: number;
}
export type UserSettingsChanged = DomainEvent<
  'UserSettingsChanged',
  { userId: number; settings: UserSettings }
>;
/** A subaccount (`vastai create subaccount`): created by its parent account, on the child's stream. Private. */
export type SubaccountRegistered = DomainEvent<
  'SubaccountRegistered',
  { userId: number; parentId: number; hostOnly: boolean }
>;
export type UserLoggedIn = DomainEvent<'UserLoggedIn', { userId: number; sessionKeyId: number; at: string }>;

export type UserEvent =
  | UserRegistered
  | UserPasswordSet
  | UserEmailVerificationRequested
  | UserEmailVerified
  | UserProfileUpdated
  | UserSettingsChanged
  | SubaccountRegistered
  | UserLoggedIn;
