import type { DomainEvent } from '@rigmarket/contracts';

/**
 * Events of a user's 2FA stream (`tfa-<userId>`). They are private to identity-2fa: none is in
 * PUBLIC_EVENTS, so hashes and encrypted secrets never reach the outbox or Kafka.
 */
export type TfaChannel = 'sms' | 'email' | 'totp';
export type TfaPurpose = 'login' | 'authorize' | 'setup' | 'verify';
export type MethodType = 'sms' | 'totp';
/**
 * What a failure count and lock belong to: a method's id, a channel (e-mail is never stored as a method but is
 * locked like one), TOTP set-up, or the account's backup codes.
 */
export type LockKey = number | 'email' | 'sms' | 'totp-setup' | 'backup';

/** What a challenge is, as issued: the state keeps it, the decider issues it. */
export interface ChallengeFields {
  secretHash: string;
  /** null for the password-login challenge, which carries no code. */
  channel: TfaChannel | null;
  purpose: TfaPurpose;
  codeHash: string | null;
  phone: string | null;
  methodId: number | null;
  /** Issued to a logged-out caller: the secret then authenticates that caller on the /tfa/ endpoints. */
  loggedOut: boolean;
}

export type TfaChallengeIssued = DomainEvent<
  'TfaChallengeIssued',
  ChallengeFields & { userId: number; issuedAt: string; expiresAt: string }
>;
export type TfaChallengeCodeReplaced = DomainEvent<
  'TfaChallengeCodeReplaced',
  {
    userId: number;
    oldSecretHash: string;
    secretHash: string;
    codeHash: string;
    issuedAt: string;
    expiresAt: string;
  }
>;
export type TfaChallengeCancelled = DomainEvent<
  'TfaChallengeCancelled',
  { userId: number; secretHash: string; reason: string }
>;
export type TfaVerificationFailed = DomainEvent<
  'TfaVerificationFailed',
  { userId: number; lockKey: LockKey; failCount: number; lockedUntil: string | null; at: string }
>;
export type TfaVerificationSucceeded = DomainEvent<
  'TfaVerificationSucceeded',
  { userId: number; lockKey: LockKey; secretHash: string | null; totpStep: number | null; at: string }
>;
export type TfaBackupCodeUsed = DomainEvent<
  'TfaBackupCodeUsed',
  { userId: number; index: number; at: string }
>;
export type TfaNewMethodAuthorized = DomainEvent<
  'TfaNewMethodAuthorized',
  { userId: number; until: string; via: string }
>;
export type TfaMethodAdded = DomainEvent<
  'TfaMethodAdded',
  {
    userId: number;
    methodId: number;
    method: MethodType;
    label: string | null;
    /** Masked only in responses; the full E.164 number is needed to send codes. */
    phone: string | null;
    /** AES-256-GCM ciphertext of the base32 TOTP secret. */
    secretEnc: string | null;
    isPrimary: boolean;
    /** The TOTP step used to confirm, so the same code is not accepted again. */
    totpStep: number | null;
    backfilled: boolean;
    at: string;
  }
>;
export type TfaBackupCodesIssued = DomainEvent<
  'TfaBackupCodesIssued',
  { userId: number; hashes: string[]; at: string }
>;
export type TfaMethodUpdated = DomainEvent<
  'TfaMethodUpdated',
  { userId: number; methodId: number; label?: string | null; isPrimary?: boolean; at: string }
>;
export type TfaMethodRemoved = DomainEvent<
  'TfaMethodRemoved',
  { userId: number; methodId: number; at: string }
>;
/** The last method went (or a legacy account was cleared): 2FA off, backup codes soft-deleted. */
export type TfaDisabled = DomainEvent<'TfaDisabled', { userId: number; at: string }>;
/** An account from before method rows existed: 2FA on, no methods, a phone number on file. */
export type TfaLegacyMarked = DomainEvent<
  'TfaLegacyMarked',
  { userId: number; phone: string | null; at: string }
>;
export type TfaLoginCompleted = DomainEvent<
  'TfaLoginCompleted',
  { userId: number; sessionKeyId: number; via: string; at: string }
>;

export type TfaEvent =
  | TfaChallengeIssued
  | TfaChallengeCodeReplaced
  | TfaChallengeCancelled
  | TfaVerificationFailed
  | TfaVerificationSucceeded
  | TfaBackupCodeUsed
  | TfaNewMethodAuthorized
  | TfaMethodAdded
  | TfaBackupCodesIssued
  | TfaMethodUpdated
  | TfaMethodRemoved
  | TfaDisabled
  | TfaLegacyMarked
  | TfaLoginCompleted;
