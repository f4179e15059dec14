import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '@rigmarket/contracts';
import type { LockKey, TfaEvent, TfaPurpose } from './tfa.events';
import {
  type Challenge,
  type Lock,
  TFA_LIMITS,
  type TfaMethod,
  type TfaState,
  epochSeconds,
  ms,
  plus,
} from './tfa.state';

// Verifying a proof (TOTP, SMS / e-mail code, backup code) against the user's 2FA state: per-method failure
// counts and locks. Every command that needs a proof decides through verify().

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

export function totpMethod(state: TfaState, methodId: number | null): TfaMethod {
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

export function fail(state: TfaState, key: LockKey, lock: Lock, now: string): TfaEvent[] {
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
