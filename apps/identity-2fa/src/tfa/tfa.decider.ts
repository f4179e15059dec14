import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '@rigmarket/contracts';
import type { LockKey, MethodType, TfaChannel, TfaEvent, TfaPurpose } from './tfa.events';

/** Windows and thresholds; docs/tfa.md explains the choices. */
export const TFA_LIMITS = {
  challengeTtlMs: 10 * 60_000,
  lockoutMs: 15 * 60_000,
  authorizationMs: 30 * 60_000,
  /** The failure that reaches this count locks the method. */
  maxFailures: 5,
  /** SMS codes (sends and resends) per user per rolling hour. */
  smsPerHour: 5,
  /** Set-up / authorization challenges to one phone number per user per rolling 24 hours. */
  preauthPerPhonePerDay: 3,
  backupCodes: 10,
  labelMax: 30,
} as const;

export interface TfaMethod {
  id: number;
  method: MethodType;
  label: string | null;
  phone: string | null;
  secretEnc: string | null;
  isPrimary: boolean;
  createdAt: string;
  lastUsed: string | null;
  lastStep: number;
}

export interface Challenge {
  secretHash: string;
  channel: TfaChannel | null;
  purpose: TfaPurpose;
  codeHash: string | null;
  phone: string | null;
  methodId: number | null;
  loggedOut: boolean;
  issuedAt: string;
  expiresAt: string;
  active: boolean;
}

export interface Lock {
  failCount: number;
  lockedUntil: string | null;
}

export interface TfaState {
  userId: number;
  enabled: boolean;
  legacy: boolean;
  legacyPhone: string | null;
  methods: TfaMethod[];
  backup: { hash: string; used: boolean }[];
  challenges: Challenge[];
  locks: Record<string, Lock>;
  authorizedUntil: string | null;
  smsLog: { at: string; phone: string; purpose: TfaPurpose }[];
}

export const initialState = (): TfaState => ({
  userId: 0,
  enabled: false,
  legacy: false,
  legacyPhone: null,
  methods: [],
  backup: [],
  challenges: [],
  locks: {},
  authorizedUntil: null,
  smsLog: [],
});

export function evolve(state: TfaState, event: TfaEvent): TfaState {
  const s: TfaState = { ...state, userId: event.data.userId };
  switch (event.type) {
    case 'TfaChallengeIssued': {
      const d = event.data;
      const challenge: Challenge = {
        secretHash: d.secretHash,
        channel: d.channel,
        purpose: d.purpose,
        codeHash: d.codeHash,
        phone: d.phone,
        methodId: d.methodId,
        loggedOut: d.loggedOut,
        issuedAt: d.issuedAt,
        expiresAt: d.expiresAt,
        active: true,
      };
      const smsLog =
        d.channel === 'sms' && d.phone
          ? [...s.smsLog, { at: d.issuedAt, phone: d.phone, purpose: d.purpose }]
          : s.smsLog;
      // Challenges and the SMS log matter for a day at most (the longest rate window): older entries are
      // dropped so the folded state of a long-lived account stays small.
      const horizon = ms(d.issuedAt) - 24 * 3600_000;
      return {
        ...s,
        challenges: [...s.challenges.filter((c) => ms(c.expiresAt) > horizon), challenge],
        smsLog: smsLog.filter((e) => ms(e.at) > horizon),
      };
    }
    case 'TfaChallengeCodeReplaced': {
      const d = event.data;
      const old = s.challenges.find((c) => c.secretHash === d.oldSecretHash);
      return {
        ...s,
        challenges: s.challenges.map((c) =>
          c.secretHash === d.oldSecretHash
            ? {
                ...c,
                secretHash: d.secretHash,
                codeHash: d.codeHash,
                issuedAt: d.issuedAt,
                expiresAt: d.expiresAt,
              }
            : c,
        ),
        smsLog: old?.phone
          ? [...s.smsLog, { at: d.issuedAt, phone: old.phone, purpose: old.purpose }]
          : s.smsLog,
      };
    }
    case 'TfaChallengeCancelled':
      return {
        ...s,
        challenges: s.challenges.map((c) =>
          c.secretHash === event.data.secretHash ? { ...c, active: false } : c,
        ),
      };
    case 'TfaVerificationFailed':
      return {
        ...s,
        locks: {
          ...s.locks,
          [String(event.data.lockKey)]: {
            failCount: event.data.failCount,
            lockedUntil: event.data.lockedUntil,
          },
        },
      };
    case 'TfaVerificationSucceeded': {
      const d = event.data;
      return {
        ...s,
        locks: { ...s.locks, [String(d.lockKey)]: { failCount: 0, lockedUntil: null } },
        challenges: s.challenges.map((c) =>
          d.secretHash !== null && c.secretHash === d.secretHash ? { ...c, active: false } : c,
        ),
        methods: s.methods.map((m) =>
          m.id === d.lockKey
            ? {
                ...m,
                lastUsed: d.at,
                lastStep: d.totpStep !== null ? Math.max(m.lastStep, d.totpStep) : m.lastStep,
              }
            : m,
        ),
      };
    }
    case 'TfaBackupCodeUsed':
      return { ...s, backup: s.backup.map((b, i) => (i === event.data.index ? { ...b, used: true } : b)) };
    case 'TfaNewMethodAuthorized':
      return { ...s, authorizedUntil: event.data.until };
    case 'TfaMethodAdded': {
      const d = event.data;
      const method: TfaMethod = {
        id: d.methodId,
        method: d.method,
        label: d.label,
        phone: d.phone,
        secretEnc: d.secretEnc,
        isPrimary: d.isPrimary,
        createdAt: d.at,
        lastUsed: null,
        lastStep: d.totpStep ?? -1,
      };
      // A method row (the legacy backfill included) ends the legacy state.
      return {
        ...s,
        enabled: true,
        legacy: false,
        legacyPhone: null,
        methods: [...s.methods.map((m) => (d.isPrimary ? { ...m, isPrimary: false } : m)), method],
      };
    }
    case 'TfaBackupCodesIssued':
      return { ...s, backup: event.data.hashes.map((hash) => ({ hash, used: false })) };
    case 'TfaMethodUpdated': {
      const d = event.data;
      return {
        ...s,
        methods: s.methods.map((m) => {
          if (m.id === d.methodId) {
            return {
              ...m,
              label: d.label !== undefined ? d.label : m.label,
              isPrimary: d.isPrimary ?? m.isPrimary,
            };
          }
          return d.isPrimary ? { ...m, isPrimary: false } : m;
        }),
      };
    }
    case 'TfaMethodRemoved':
      return { ...s, methods: s.methods.filter((m) => m.id !== event.data.methodId) };
    case 'TfaDisabled':
      return {
        ...s,
        enabled: false,
        legacy: false,
        legacyPhone: null,
        methods: [],
        backup: [],
        authorizedUntil: null,
      };
    case 'TfaLegacyMarked':
      return { ...s, enabled: true, legacy: true, legacyPhone: event.data.phone };
    case 'TfaLoginCompleted':
      return { ...s, challenges: s.challenges.map((c) => (c.loggedOut ? { ...c, active: false } : c)) };
    default:
      return s;
  }
}

// ---------------------------------------------------------------------------------------------

/** What the caller offers as proof. Slow or secret work (TOTP maths, hashing) is done by the handler. */
export type Proof =
  /** matches: TOTP method id -> the step its code matched (±1 step), or null. */
  | { kind: 'totp'; methodId: number | null; matches: Record<number, number | null> }
  | {
      kind: 'code';
      channel: 'sms' | 'email';
      secretHash: string | null;
      codeHash: string;
      methodId: number | null;
    }
  | { kind: 'backup'; codeHash: string };

export type TfaCommand =
  | { type: 'IssueLoginChallenge'; userId: number; secretHash: string; now: string }
  | {
      type: 'SendEmailCode';
      userId: number;
      secretHash: string;
      codeHash: string;
      purpose: TfaPurpose;
      loggedOut: boolean;
      emailVerified: boolean;
      now: string;
    }
  | {
      type: 'SendSmsCode';
      userId: number;
      secretHash: string;
      codeHash: string;
      phone: string | null;
      methodId: number | null;
      purpose: TfaPurpose;
      loggedOut: boolean;
      /** E-mail verified, or an admin (exempt on the SMS send endpoints only). */
      mayReceiveCodes: boolean;
      /** Set-up SMS challenges to this number across all accounts in the last 24 hours (read model). */
      phoneAttemptsToday: number;
      now: string;
    }
  | {
      type: 'ResendSmsCode';
      userId: number;
      secretHash: string | null;
      newSecretHash: string;
      codeHash: string;
      phone: string | null;
      methodId: number | null;
      now: string;
    }
  | { type: 'CancelChallenge'; userId: number; secretHash: string; reason: string }
  | {
      type: 'StartAuthorization';
      userId: number;
      tfaMethod: TfaChannel | null;
      methodId: number | null;
      backupCodeHash: string | null;
      secretHash: string;
      codeHash: string;
      emailVerified: boolean;
      now: string;
    }
  | { type: 'ConfirmAuthorization'; userId: number; secretHash: string; proof: Proof; now: string }
  | {
      type: 'ConfirmNewMethod';
      userId: number;
      method: MethodType;
      methodId: number;
      label: string | null;
      /** SMS: the phone number of the set-up challenge (must match); TOTP: null. */
      phone: string | null;
      /** SMS: the set-up challenge; TOTP: the step the code matched against the new secret, or null. */
      smsProof: Proof | null;
      totpStep: number | null;
      secretEnc: string | null;
      backupHashes: string[];
      now: string;
    }
  | { type: 'CompleteLogin'; userId: number; proof: Proof; sessionKeyId: number; now: string }
  | { type: 'RemoveMethod'; userId: number; proof: Proof | null; targetId: number | null; now: string }
  | {
      type: 'UpdateMethod';
      userId: number;
      methodId: number | null;
      method: MethodType | null;
      label?: string;
      isPrimary?: boolean;
      now: string;
    }
  | {
      type: 'RegenerateBackupCodes';
      userId: number;
      proof: Proof;
      hashes: string[];
      backfillMethodId: number;
      now: string;
    }
  | { type: 'MarkLegacy'; userId: number; phone: string | null; now: string };

const ms = (iso: string): number => new Date(iso).getTime();
const plus = (iso: string, delta: number): string => new Date(ms(iso) + delta).toISOString();
const epochSeconds = (iso: string | null): number | null =>
  iso === null ? null : Math.floor(ms(iso) / 1000);

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

export function findChallenge(state: TfaState, secretHash: string): Challenge | undefined {
  return state.challenges.find((c) => sameHash(c.secretHash, secretHash));
}

export function currentLock(state: TfaState, key: LockKey, now: string): Lock {
  const lock = state.locks[String(key)];
  if (!lock) return { failCount: 0, lockedUntil: null };
  // A lock that has run out starts the count again.
  if (lock.lockedUntil !== null && ms(lock.lockedUntil) <= ms(now))
    return { failCount: 0, lockedUntil: null };
  return lock;
}

export function isLocked(lock: Lock, now: string): boolean {
  return lock.lockedUntil !== null && ms(lock.lockedUntil) > ms(now);
}

export function lockedError(lock: Lock, now: string): DomainError {
  return new DomainError('tfa_locked', 'Too many failed attempts: this 2FA method is locked for 15 minutes', {
    fail_count: lock.failCount,
    locked_until: epochSeconds(lock.lockedUntil),
    // Sent as the Retry-After header too (ErrorEnvelopeFilter).
    retry_after:
      lock.lockedUntil === null ? 1 : Math.max(1, Math.ceil((ms(lock.lockedUntil) - ms(now)) / 1000)),
  });
}

/** The error a recorded failure answers (the failing attempt's event is stored first). */
export function failureError(event: TfaEvent): DomainError | null {
  if (event.type !== 'TfaVerificationFailed') return null;
  if (event.data.lockKey === 'backup')
    return new DomainError('invalid_backup_code', 'The backup code is invalid or has been used', {
      fail_count: event.data.failCount,
      locked_until: epochSeconds(event.data.lockedUntil),
    });
  return new DomainError('2fa_verification_failed', 'The 2FA code is not valid', {
    fail_count: event.data.failCount,
    locked_until: epochSeconds(event.data.lockedUntil),
  });
}

function totpMethod(state: TfaState, methodId: number | null): TfaMethod {
  const totps = state.methods.filter((m) => m.method === 'totp');
  if (methodId !== null) {
    const method = state.methods.find((m) => m.id === methodId);
    if (!method) throw new DomainError('invalid_tfa_method', 'No 2FA method with this tfa_method_id');
    if (method.method !== 'totp')
      throw new DomainError('invalid_tfa_method', 'tfa_method_id does not name a TOTP method');
    return method;
  }
  if (totps.length === 0)
    throw new DomainError('invalid_tfa_method', 'No TOTP method is configured on this account');
  if (totps.length > 1)
    throw new DomainError('bad_request', 'Several TOTP methods exist: send tfa_method_id');
  return totps[0]!;
}

function fail(state: TfaState, key: LockKey, lock: Lock, now: string): TfaEvent[] {
  const failCount = lock.failCount + 1;
  const lockedUntil = failCount >= TFA_LIMITS.maxFailures ? plus(now, TFA_LIMITS.lockoutMs) : null;
  return [
    {
      type: 'TfaVerificationFailed',
      data: { userId: state.userId, lockKey: key, failCount, lockedUntil, at: now },
    },
  ];
}

export interface Verified {
  events: TfaEvent[];
  /** False when the events only record a failure. */
  ok: boolean;
  /** The method that verified, when one did. */
  methodId: number | null;
  challenge: Challenge | null;
  via: 'totp' | 'sms' | 'email' | 'backup_code';
}

/**
 * Checks a proof. A wrong code is recorded (TfaVerificationFailed) rather than thrown, so the failure
 * count persists; the handler answers 2fa_verification_failed after storing it.
 */
export function verify(
  state: TfaState,
  proof: Proof,
  now: string,
  purposes: readonly TfaPurpose[],
): Verified {
  switch (proof.kind) {
    case 'backup': {
      // Backup codes count failures and lock like a method (lock key "backup").
      const lock = currentLock(state, 'backup', now);
      if (isLocked(lock, now)) throw lockedError(lock, now);
      const index = state.backup.findIndex((b) => !b.used && sameHash(b.hash, proof.codeHash));
      if (index < 0)
        return {
          events: fail(state, 'backup', lock, now),
          ok: false,
          methodId: null,
          challenge: null,
          via: 'backup_code',
        };
      return {
        events: [
          { type: 'TfaBackupCodeUsed', data: { userId: state.userId, index, at: now } },
          ...(lock.failCount > 0
            ? [
                {
                  type: 'TfaVerificationSucceeded' as const,
                  data: {
                    userId: state.userId,
                    lockKey: 'backup' as const,
                    secretHash: null,
                    totpStep: null,
                    at: now,
                  },
                },
              ]
            : []),
        ],
        ok: true,
        methodId: null,
        challenge: null,
        via: 'backup_code',
      };
    }
    case 'totp': {
      const method = totpMethod(state, proof.methodId);
      const lock = currentLock(state, method.id, now);
      if (isLocked(lock, now)) throw lockedError(lock, now);
      const step = proof.matches[method.id] ?? null;
      // A code accepted once is refused for the rest of its step (and older steps).
      if (step === null || step <= method.lastStep) {
        return {
          events: fail(state, method.id, lock, now),
          ok: false,
          methodId: method.id,
          challenge: null,
          via: 'totp',
        };
      }
      return {
        events: [
          {
            type: 'TfaVerificationSucceeded',
            data: { userId: state.userId, lockKey: method.id, secretHash: null, totpStep: step, at: now },
          },
        ],
        ok: true,
        methodId: method.id,
        challenge: null,
        via: 'totp',
      };
    }
    case 'code': {
      if (proof.secretHash === null)
        throw new DomainError(
          'missing_params',
          'code and secret are required for SMS and e-mail verification',
        );
      const challenge = findChallenge(state, proof.secretHash);
      if (
        !challenge ||
        challenge.channel === null ||
        challenge.channel === 'totp' ||
        !purposes.includes(challenge.purpose)
      ) {
        throw new DomainError('challenge_not_found', 'No challenge matches this secret');
      }
      if (!challenge.active)
        throw new DomainError(
          'no_challenge_found',
          'No active challenge: it was used or cleared; request a new code',
        );
      if (ms(challenge.expiresAt) <= ms(now))
        throw new DomainError('2fa_expired', 'The 2FA code has expired; request a new one');
      if (challenge.channel !== proof.channel)
        throw new DomainError('challenge_not_found', `No ${proof.channel} challenge matches this secret`);
      const key: LockKey = challenge.methodId ?? challenge.channel;
      const lock = currentLock(state, key, now);
      if (isLocked(lock, now)) throw lockedError(lock, now);
      if (!challenge.codeHash || !sameHash(challenge.codeHash, proof.codeHash)) {
        return {
          events: fail(state, key, lock, now),
          ok: false,
          methodId: challenge.methodId,
          challenge,
          via: challenge.channel,
        };
      }
      return {
        events: [
          {
            type: 'TfaVerificationSucceeded',
            data: {
              userId: state.userId,
              lockKey: key,
              secretHash: challenge.secretHash,
              totpStep: null,
              at: now,
            },
          },
        ],
        ok: true,
        methodId: challenge.methodId,
        challenge,
        via: challenge.channel,
      };
    }
  }
}

function resolveSmsTarget(
  state: TfaState,
  phone: string | null,
  methodId: number | null,
): { phone: string; methodId: number | null } {
  if (methodId !== null) {
    const method = state.methods.find((m) => m.id === methodId);
    if (!method || method.method !== 'sms' || !method.phone)
      throw new DomainError('invalid_tfa_method', 'tfa_method_id does not name an SMS method');
    return { phone: method.phone, methodId };
  }
  if (phone !== null) {
    const known = state.methods.find((m) => m.method === 'sms' && m.phone === phone);
    return { phone, methodId: known?.id ?? null };
  }
  const sms = state.methods.filter((m) => m.method === 'sms');
  const chosen = sms.find((m) => m.isPrimary) ?? sms[0];
  if (chosen?.phone) return { phone: chosen.phone, methodId: chosen.id };
  if (state.legacyPhone) return { phone: state.legacyPhone, methodId: null };
  throw new DomainError('bad_request', 'phone_number is required: no phone number is on the account');
}

function checkSmsRate(
  state: TfaState,
  phone: string,
  purpose: TfaPurpose,
  knownMethod: boolean,
  now: string,
  acrossAccounts = 0,
): void {
  const hourAgo = ms(now) - 3600_000;
  if (state.smsLog.filter((e) => ms(e.at) > hourAgo).length >= TFA_LIMITS.smsPerHour) {
    throw new DomainError('sms_rate_limited', 'Too many SMS codes requested; wait before asking again');
  }
  if (!knownMethod && (purpose === 'setup' || purpose === 'authorize')) {
    const dayAgo = ms(now) - 24 * 3600_000;
    const used = state.smsLog.filter(
      (e) => e.phone === phone && ms(e.at) > dayAgo && (e.purpose === 'setup' || e.purpose === 'authorize'),
    ).length;
    if (Math.max(used, acrossAccounts) >= TFA_LIMITS.preauthPerPhonePerDay) {
      throw new DomainError(
        'preauth_phone_cap',
        'This phone number was used in too many authorization attempts; try again tomorrow',
      );
    }
  }
}

function issue(
  state: TfaState,
  c: {
    secretHash: string;
    channel: TfaChannel | null;
    purpose: TfaPurpose;
    codeHash: string | null;
    phone: string | null;
    methodId: number | null;
    loggedOut: boolean;
  },
  now: string,
): TfaEvent {
  return {
    type: 'TfaChallengeIssued',
    data: { userId: state.userId, ...c, issuedAt: now, expiresAt: plus(now, TFA_LIMITS.challengeTtlMs) },
  };
}

function authorized(state: TfaState, now: string): boolean {
  return state.authorizedUntil !== null && ms(state.authorizedUntil) > ms(now);
}

export function decide(command: TfaCommand, current: TfaState): TfaEvent[] {
  const state: TfaState = { ...current, userId: command.userId };
  const now = 'now' in command ? command.now : new Date(0).toISOString();
  switch (command.type) {
    case 'IssueLoginChallenge':
      return [
        issue(
          state,
          {
            secretHash: command.secretHash,
            channel: null,
            purpose: 'login',
            codeHash: null,
            phone: null,
            methodId: null,
            loggedOut: true,
          },
          now,
        ),
      ];

    case 'SendEmailCode':
      if (!command.emailVerified)
        throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
      return [
        issue(
          state,
          {
            secretHash: command.secretHash,
            channel: 'email',
            purpose: command.purpose,
            codeHash: command.codeHash,
            phone: null,
            methodId: null,
            loggedOut: command.loggedOut,
          },
          now,
        ),
      ];

    case 'SendSmsCode': {
      if (!command.mayReceiveCodes)
        throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
      const target = resolveSmsTarget(state, command.phone, command.methodId);
      const recent = state.challenges.find(
        (c) => c.active && c.channel === 'sms' && c.phone === target.phone && ms(c.expiresAt) > ms(now),
      );
      if (recent)
        throw new DomainError(
          'tfa_challenge_exists',
          'A code was sent recently and is still valid; use resend',
        );
      checkSmsRate(
        state,
        target.phone,
        command.purpose,
        target.methodId !== null,
        now,
        command.phoneAttemptsToday,
      );
      return [
        issue(
          state,
          {
            secretHash: command.secretHash,
            channel: 'sms',
            purpose: command.purpose,
            codeHash: command.codeHash,
            phone: target.phone,
            methodId: target.methodId,
            loggedOut: command.loggedOut,
          },
          now,
        ),
      ];
    }

    case 'ResendSmsCode': {
      let challenge: Challenge | undefined;
      if (command.secretHash !== null) {
        challenge = findChallenge(state, command.secretHash);
        if (!challenge || challenge.channel !== 'sms')
          throw new DomainError('challenge_not_found', 'No SMS challenge matches this secret');
      } else {
        const phone =
          command.methodId !== null ? resolveSmsTarget(state, null, command.methodId).phone : command.phone;
        if (phone === null)
          throw new DomainError('bad_request', 'phone_number or tfa_method_id is required without a secret');
        challenge = [...state.challenges]
          .reverse()
          .find((c) => c.channel === 'sms' && c.phone === phone && c.active);
      }
      if (!challenge || !challenge.active)
        throw new DomainError('no_challenge_found', 'No active SMS challenge to resend; request a new code');
      if (command.phone !== null && command.phone !== challenge.phone) {
        throw new DomainError('bad_request', 'phone_number does not match the original challenge');
      }
      checkSmsRate(state, challenge.phone!, 'verify', true, now);
      return [
        {
          type: 'TfaChallengeCodeReplaced',
          data: {
            userId: state.userId,
            oldSecretHash: challenge.secretHash,
            secretHash: command.secretHash ?? command.newSecretHash,
            codeHash: command.codeHash,
            issuedAt: now,
            expiresAt: plus(now, TFA_LIMITS.challengeTtlMs),
          },
        },
      ];
    }

    case 'CancelChallenge':
      return [
        {
          type: 'TfaChallengeCancelled',
          data: { userId: state.userId, secretHash: command.secretHash, reason: command.reason },
        },
      ];

    case 'StartAuthorization': {
      if (command.backupCodeHash !== null) {
        const verified = verify(state, { kind: 'backup', codeHash: command.backupCodeHash }, now, []);
        if (!verified.ok) return verified.events;
        return [
          ...verified.events,
          {
            type: 'TfaNewMethodAuthorized',
            data: { userId: state.userId, until: plus(now, TFA_LIMITS.authorizationMs), via: 'backup_code' },
          },
        ];
      }
      let channel: TfaChannel = command.tfaMethod ?? 'email';
      let methodId = command.methodId;
      if (state.methods.length === 0) {
        // Users with no methods are forced to e-mail.
        channel = 'email';
        methodId = null;
      } else if (methodId !== null) {
        const method = state.methods.find((m) => m.id === methodId);
        if (!method) throw new DomainError('invalid_tfa_method', 'No 2FA method with this tfa_method_id');
        channel = method.method;
      }
      if (channel === 'email') {
        if (!command.emailVerified)
          throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
        return [
          issue(
            state,
            {
              secretHash: command.secretHash,
              channel: 'email',
              purpose: 'authorize',
              codeHash: command.codeHash,
              phone: null,
              methodId: null,
              loggedOut: false,
            },
            now,
          ),
        ];
      }
      if (channel === 'totp') {
        const method = totpMethod(state, methodId);
        return [
          issue(
            state,
            {
              secretHash: command.secretHash,
              channel: 'totp',
              purpose: 'authorize',
              codeHash: null,
              phone: null,
              methodId: method.id,
              loggedOut: false,
            },
            now,
          ),
        ];
      }
      if (!command.emailVerified)
        throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
      const target = resolveSmsTarget(state, null, methodId);
      const recent = state.challenges.find(
        (c) => c.active && c.channel === 'sms' && c.phone === target.phone && ms(c.expiresAt) > ms(now),
      );
      if (recent)
        throw new DomainError(
          'tfa_challenge_exists',
          'A code was sent recently and is still valid; use resend',
        );
      checkSmsRate(state, target.phone, 'authorize', target.methodId !== null, now);
      return [
        issue(
          state,
          {
            secretHash: command.secretHash,
            channel: 'sms',
            purpose: 'authorize',
            codeHash: command.codeHash,
            phone: target.phone,
            methodId: target.methodId,
            loggedOut: false,
          },
          now,
        ),
      ];
    }

    case 'ConfirmAuthorization': {
      const pending = state.challenges.filter((c) => c.purpose === 'authorize');
      if (pending.length === 0)
        throw new DomainError(
          'no_pending_authorization',
          'No pending authorization: call POST authorize-new-method first',
        );
      const challenge = findChallenge(state, command.secretHash);
      if (!challenge || challenge.purpose !== 'authorize')
        throw new DomainError('challenge_not_found', 'No authorization challenge matches this secret');
      if (!challenge.active)
        throw new DomainError(
          'no_challenge_found',
          'No active challenge: it was used or cleared; start again',
        );
      if (ms(challenge.expiresAt) <= ms(now))
        throw new DomainError('2fa_expired', 'The 2FA code has expired; start again');
      let proof = command.proof;
      if (challenge.channel === 'totp') {
        if (proof.kind !== 'totp')
          throw new DomainError('bad_request', 'This authorization is by TOTP: send the TOTP code');
        proof = { ...proof, methodId: challenge.methodId };
      } else if (proof.kind === 'code') {
        proof = { ...proof, channel: challenge.channel === 'sms' ? 'sms' : 'email' };
      }
      const verified = verify(state, proof, now, ['authorize']);
      if (!verified.ok) return verified.events;
      const consumed: TfaEvent[] =
        challenge.channel === 'totp'
          ? [
              {
                type: 'TfaChallengeCancelled',
                data: { userId: state.userId, secretHash: challenge.secretHash, reason: 'used' },
              },
            ]
          : [];
      return [
        ...verified.events,
        ...consumed,
        {
          type: 'TfaNewMethodAuthorized',
          data: { userId: state.userId, until: plus(now, TFA_LIMITS.authorizationMs), via: verified.via },
        },
      ];
    }

    case 'ConfirmNewMethod': {
      if (command.label !== null && command.label.length > TFA_LIMITS.labelMax)
        throw new DomainError('bad_request', 'label must be at most 30 characters');
      if (state.legacy && state.methods.length === 0) {
        throw new DomainError(
          'untracked_2fa_found',
          'This account has untracked (legacy) 2FA: regenerate backup codes before adding a method',
        );
      }
      if (!authorized(state, now))
        throw new DomainError(
          'authorization_required',
          'Adding a 2FA method needs a fresh authorization (authorize-new-method)',
        );
      const events: TfaEvent[] = [];
      let phone: string | null = null;
      if (command.method === 'totp') {
        if (state.methods.some((m) => m.method === 'totp'))
          throw new DomainError('duplicate_tfa_method', 'A TOTP method is already configured');
        const lock = currentLock(state, 'totp-setup', now);
        if (isLocked(lock, now)) throw lockedError(lock, now);
        if (command.totpStep === null) return fail(state, 'totp-setup', lock, now);
      } else {
        if (!command.smsProof) throw new DomainError('missing_params', 'code and secret are required');
        const verified = verify(state, command.smsProof, now, ['setup', 'verify', 'authorize']);
        if (!verified.ok) return verified.events;
        phone = verified.challenge?.phone ?? null;
        if (command.phone !== null && command.phone !== phone)
          throw new DomainError('bad_request', 'phone_number does not match the number the code was sent to');
        if (state.methods.some((m) => m.method === 'sms' && m.phone === phone)) {
          throw new DomainError(
            'duplicate_tfa_method',
            'An SMS method with this phone number is already configured',
          );
        }
        events.push(...verified.events);
      }
      const first = state.methods.length === 0;
      events.push({
        type: 'TfaMethodAdded',
        data: {
          userId: state.userId,
          methodId: command.methodId,
          method: command.method,
          label: command.label,
          phone,
          secretEnc: command.method === 'totp' ? command.secretEnc : null,
          isPrimary: first,
          totpStep: command.totpStep,
          backfilled: false,
          at: now,
        },
      });
      if (first && !state.enabled)
        events.push({
          type: 'TfaBackupCodesIssued',
          data: { userId: state.userId, hashes: command.backupHashes, at: now },
        });
      return events;
    }

    case 'CompleteLogin': {
      if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
      const verified = verify(state, command.proof, now, ['login', 'verify']);
      if (!verified.ok) return verified.events;
      return [
        ...verified.events,
        {
          type: 'TfaLoginCompleted',
          data: { userId: state.userId, sessionKeyId: command.sessionKeyId, via: verified.via, at: now },
        },
      ];
    }

    case 'RemoveMethod': {
      if (state.legacy && state.methods.length === 0)
        return [{ type: 'TfaDisabled', data: { userId: state.userId, at: now } }];
      if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
      if (!command.proof) throw new DomainError('missing_auth_value', 'code or backup_code is required');
      if (command.proof.kind === 'backup' && command.targetId === null)
        throw new DomainError('bad_request', 'target_id is required with backup_code');
      const verified = verify(state, command.proof, now, ['login', 'verify', 'authorize']);
      if (!verified.ok) return verified.events;
      const targetId = command.targetId ?? verified.methodId;
      const target = state.methods.find((m) => m.id === targetId);
      if (!target) throw new DomainError('invalid_tfa_method', 'No 2FA method with this id: send target_id');
      const events: TfaEvent[] = [
        ...verified.events,
        { type: 'TfaMethodRemoved', data: { userId: state.userId, methodId: target.id, at: now } },
      ];
      if (state.methods.length === 1)
        events.push({ type: 'TfaDisabled', data: { userId: state.userId, at: now } });
      return events;
    }

    case 'UpdateMethod': {
      let method: TfaMethod | undefined;
      if (command.methodId !== null) {
        method = state.methods.find((m) => m.id === command.methodId);
      } else if (command.method !== null) {
        const ofType = state.methods.filter((m) => m.method === command.method);
        if (ofType.length > 1)
          throw new DomainError('bad_request', 'Several methods of this type exist: send tfa_method_id');
        method = ofType[0];
      } else {
        throw new DomainError('bad_request', 'tfa_method_id or tfa_method is required');
      }
      if (!method) throw new DomainError('invalid_tfa_method', 'No such 2FA method');
      if (command.label !== undefined && command.label.length > TFA_LIMITS.labelMax)
        throw new DomainError('bad_request', 'label must be at most 30 characters');
      return [
        {
          type: 'TfaMethodUpdated',
          data: {
            userId: state.userId,
            methodId: method.id,
            ...(command.label !== undefined ? { label: command.label } : {}),
            ...(command.isPrimary !== undefined ? { isPrimary: command.isPrimary } : {}),
            at: now,
          },
        },
      ];
    }

    case 'RegenerateBackupCodes': {
      if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
      const verified = verify(state, command.proof, now, ['login', 'verify', 'authorize']);
      if (!verified.ok) return verified.events;
      const events: TfaEvent[] = [...verified.events];
      if (state.legacy && state.methods.length === 0) {
        if (!state.legacyPhone)
          throw new DomainError('bad_request', 'No phone number on file to backfill the legacy SMS method');
        events.push({
          type: 'TfaMethodAdded',
          data: {
            userId: state.userId,
            methodId: command.backfillMethodId,
            method: 'sms',
            label: null,
            phone: state.legacyPhone,
            secretEnc: null,
            isPrimary: true,
            totpStep: null,
            backfilled: true,
            at: now,
          },
        });
      }
      events.push({
        type: 'TfaBackupCodesIssued',
        data: { userId: state.userId, hashes: command.hashes, at: now },
      });
      return events;
    }

    case 'MarkLegacy':
      return [{ type: 'TfaLegacyMarked', data: { userId: state.userId, phone: command.phone, at: now } }];
  }
}

export const tfaDecider = { initialState, evolve, decide };
export const tfaStreamId = (userId: number): string => `tfa-${userId}`;

/** The status view of one method (phone masked, TOTP secret never shown). */
export function methodView(state: TfaState, m: TfaMethod, now: string) {
  const lock = currentLock(state, m.id, now);
  return {
    id: m.id,
    user_id: state.userId,
    method: m.method,
    // The spec's types: label a string ("" when none was given); last_used null until the first use.
    label: m.label ?? '',
    phone_number: m.phone ? maskPhone(m.phone) : null,
    is_primary: m.isPrimary,
    fail_count: lock.failCount,
    locked_until: isLocked(lock, now) ? epochSeconds(lock.lockedUntil) : null,
    created_at: epochSeconds(m.createdAt) ?? 0,
    last_used: epochSeconds(m.lastUsed),
  };
}

export function maskPhone(phone: string): string {
  return `******${phone.slice(-4)}`;
}
