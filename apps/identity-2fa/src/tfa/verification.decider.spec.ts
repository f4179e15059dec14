import type { TfaEvent } from './tfa.events';
import { TFA_LIMITS } from './tfa.state';
import { T0, at, codes, h, spec, totpAdded, totpProof, userId } from './testing/fixtures';

// verify() through the login command: TOTP steps, failure counts and locks, one-time backup codes.
describe('2FA proofs', () => {
  it('a TOTP code of an already used step is a recorded failure', () => {
    spec
      .given([totpAdded, codes])
      .when({ type: 'CompleteLogin', userId, proof: totpProof(100), sessionKeyId: 9, now: at(1000) })
      .then([
        {
          type: 'TfaVerificationFailed',
          data: { userId, lockKey: 3, failCount: 1, lockedUntil: null, at: at(1000) },
        },
      ]);
  });

  it('a good TOTP code completes the login', () => {
    spec
      .given([totpAdded, codes])
      .when({ type: 'CompleteLogin', userId, proof: totpProof(101), sessionKeyId: 9, now: at(1000) })
      .then([
        {
          type: 'TfaVerificationSucceeded',
          data: { userId, lockKey: 3, secretHash: null, totpStep: 101, at: at(1000) },
        },
        { type: 'TfaLoginCompleted', data: { userId, sessionKeyId: 9, via: 'totp', at: at(1000) } },
      ]);
  });

  it('the failure that reaches the threshold locks the method for 15 minutes; then tfa_locked', () => {
    const failed = (n: number, lockedUntil: string | null): TfaEvent => ({
      type: 'TfaVerificationFailed',
      data: { userId, lockKey: 3, failCount: n, lockedUntil, at: T0 },
    });
    const four = [1, 2, 3, 4].map((n) => failed(n, null));
    spec
      .given([totpAdded, codes, ...four])
      .when({ type: 'CompleteLogin', userId, proof: totpProof(null), sessionKeyId: 9, now: T0 })
      .then([failed(5, at(TFA_LIMITS.lockoutMs))]);
    spec
      .given([totpAdded, codes, ...four, failed(5, at(TFA_LIMITS.lockoutMs))])
      .when({ type: 'CompleteLogin', userId, proof: totpProof(101), sessionKeyId: 9, now: at(60_000) })
      .thenThrows('tfa_locked');
  });

  it('backup codes are one-time', () => {
    const used: TfaEvent = { type: 'TfaBackupCodeUsed', data: { userId, index: 0, at: T0 } };
    spec
      .given([totpAdded, codes])
      .when({
        type: 'CompleteLogin',
        userId,
        proof: { kind: 'backup', codeHash: h('a') },
        sessionKeyId: 9,
        now: T0,
      })
      .then([
        used,
        { type: 'TfaLoginCompleted', data: { userId, sessionKeyId: 9, via: 'backup_code', at: T0 } },
      ]);
    spec
      .given([totpAdded, codes, used])
      .when({
        type: 'CompleteLogin',
        userId,
        proof: { kind: 'backup', codeHash: h('a') },
        sessionKeyId: 9,
        now: T0,
      })
      .then([
        {
          type: 'TfaVerificationFailed',
          data: { userId, lockKey: 'backup', failCount: 1, lockedUntil: null, at: T0 },
        },
      ]);
  });

  it('backup codes count failures and lock like a method (tfa_locked with retry_after)', () => {
    const failure = (n: number, lockedUntil: string | null) => ({
      type: 'TfaVerificationFailed' as const,
      data: { userId, lockKey: 'backup' as const, failCount: n, lockedUntil, at: T0 },
    });
    const wrong = {
      type: 'CompleteLogin' as const,
      userId,
      proof: { kind: 'backup' as const, codeHash: h('f') },
      sessionKeyId: 9,
      now: T0,
    };
    const earlier = Array.from({ length: TFA_LIMITS.maxFailures - 1 }, (_, i) => failure(i + 1, null));
    spec
      .given([totpAdded, codes, ...earlier])
      .when(wrong)
      .then([failure(TFA_LIMITS.maxFailures, at(TFA_LIMITS.lockoutMs))]);
    // Locked: even the right code is refused until the lock runs out.
    spec
      .given([totpAdded, codes, ...earlier, failure(TFA_LIMITS.maxFailures, at(TFA_LIMITS.lockoutMs))])
      .when({ ...wrong, proof: { kind: 'backup', codeHash: h('a') } })
      .thenThrows('tfa_locked');
  });
});
