import { deciderSpec } from '@rigmarket/testing';
import { TFA_LIMITS, type TfaCommand, decide, evolve, initialState, tfaDecider } from './tfa.decider';
import type { TfaEvent } from './tfa.events';

const spec = deciderSpec(tfaDecider);
const T0 = '2026-03-01T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const h = (c: string) => c.repeat(64).slice(0, 64);
const userId = 7;

const authorized: TfaEvent = {
  type: 'TfaNewMethodAuthorized',
  data: { userId, until: at(30 * 60_000), via: 'email' },
};
const totpAdded: TfaEvent = {
  type: 'TfaMethodAdded',
  data: {
    userId,
    methodId: 3,
    method: 'totp',
    label: null,
    phone: null,
    secretEnc: 'v1.x.y.z',
    isPrimary: true,
    totpStep: 100,
    backfilled: false,
    at: T0,
  },
};
const codes: TfaEvent = { type: 'TfaBackupCodesIssued', data: { userId, hashes: [h('a'), h('b')], at: T0 } };
const emailChallenge: TfaEvent = {
  type: 'TfaChallengeIssued',
  data: {
    userId,
    secretHash: h('5'),
    channel: 'email',
    purpose: 'authorize',
    codeHash: h('c'),
    phone: null,
    methodId: null,
    loggedOut: false,
    issuedAt: T0,
    expiresAt: at(TFA_LIMITS.challengeTtlMs),
  },
};
const totpProof = (step: number | null) => ({ kind: 'totp' as const, methodId: null, matches: { 3: step } });

const confirmTotp = (now: string, totpStep: number | null): TfaCommand => ({
  type: 'ConfirmNewMethod',
  userId,
  method: 'totp',
  methodId: 3,
  label: null,
  phone: null,
  smsProof: null,
  totpStep,
  secretEnc: 'v1.x.y.z',
  backupHashes: [h('a'), h('b')],
  now,
});

describe('2FA decider', () => {
  it('first confirmed method: method added and backup codes issued', () => {
    spec
      .given([authorized])
      .when(confirmTotp(at(1000), 100))
      .then([
        { ...totpAdded, data: { ...totpAdded.data, at: at(1000) } },
        { ...codes, data: { ...codes.data, at: at(1000) } },
      ]);
  });

  it('adding without a fresh authorization: authorization_required', () => {
    spec
      .given([authorized])
      .when(confirmTotp(at(30 * 60_000 + 1), 100))
      .thenThrows('authorization_required');
  });

  it('a second TOTP method: duplicate_tfa_method', () => {
    spec
      .given([authorized, totpAdded, codes])
      .when(confirmTotp(at(1000), 101))
      .thenThrows('duplicate_tfa_method');
  });

  it('legacy account with no method rows: untracked_2fa_found on add', () => {
    spec
      .given([{ type: 'TfaLegacyMarked', data: { userId, phone: '+14155550100', at: T0 } }, authorized])
      .when(confirmTotp(at(1000), 100))
      .thenThrows('untracked_2fa_found');
  });

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

  it('an e-mail challenge expires after 10 minutes', () => {
    spec
      .given([emailChallenge])
      .when({
        type: 'ConfirmAuthorization',
        userId,
        secretHash: h('5'),
        proof: { kind: 'code', channel: 'email', secretHash: h('5'), codeHash: h('c'), methodId: null },
        now: at(TFA_LIMITS.challengeTtlMs),
      })
      .thenThrows('2fa_expired');
  });

  it('PUT authorize without a POST: no_pending_authorization', () => {
    spec
      .given([])
      .when({
        type: 'ConfirmAuthorization',
        userId,
        secretHash: h('5'),
        proof: { kind: 'code', channel: 'email', secretHash: h('5'), codeHash: h('c'), methodId: null },
        now: T0,
      })
      .thenThrows('no_pending_authorization');
  });

  it('users with no methods are forced to e-mail', () => {
    spec
      .given([])
      .when({
        type: 'StartAuthorization',
        userId,
        tfaMethod: 'sms',
        methodId: null,
        backupCodeHash: null,
        secretHash: h('5'),
        codeHash: h('c'),
        emailVerified: true,
        now: T0,
      })
      .then([emailChallenge]);
  });

  it('removing the last method disables 2FA', () => {
    spec
      .given([totpAdded, codes])
      .when({ type: 'RemoveMethod', userId, proof: totpProof(101), targetId: null, now: T0 })
      .then([
        {
          type: 'TfaVerificationSucceeded',
          data: { userId, lockKey: 3, secretHash: null, totpStep: 101, at: T0 },
        },
        { type: 'TfaMethodRemoved', data: { userId, methodId: 3, at: T0 } },
        { type: 'TfaDisabled', data: { userId, at: T0 } },
      ]);
    const state = [totpAdded, codes, { type: 'TfaDisabled', data: { userId, at: T0 } } as TfaEvent].reduce(
      evolve,
      initialState(),
    );
    expect(state).toMatchObject({ enabled: false, methods: [], backup: [] });
  });

  it('legacy regenerate: an SMS method is backfilled from the number on file, then codes are generated', () => {
    const legacy: TfaEvent = { type: 'TfaLegacyMarked', data: { userId, phone: '+14155550100', at: T0 } };
    const events = decide(
      {
        type: 'RegenerateBackupCodes',
        userId,
        proof: { kind: 'backup', codeHash: h('a') },
        hashes: [h('d')],
        backfillMethodId: 11,
        now: T0,
      },
      [legacy, codes].reduce(evolve, initialState()),
    );
    expect(events.map((e) => e.type)).toEqual([
      'TfaBackupCodeUsed',
      'TfaMethodAdded',
      'TfaBackupCodesIssued',
    ]);
    expect(events[1]).toMatchObject({ data: { method: 'sms', phone: '+14155550100', backfilled: true } });
  });

  it('SMS: a valid recent code blocks a new send (tfa_challenge_exists); too many sends are rate limited', () => {
    const sms = (secret: string, issuedAt: string): TfaEvent => ({
      type: 'TfaChallengeIssued',
      data: {
        userId,
        secretHash: h(secret),
        channel: 'sms',
        purpose: 'verify',
        codeHash: h('c'),
        phone: '+14155550100',
        methodId: null,
        loggedOut: false,
        issuedAt,
        expiresAt: at(Date.parse(issuedAt) - Date.parse(T0) + TFA_LIMITS.challengeTtlMs),
      },
    });
    const send = (now: string): TfaCommand => ({
      type: 'SendSmsCode',
      userId,
      secretHash: h('9'),
      codeHash: h('c'),
      phone: '+14155550100',
      methodId: null,
      purpose: 'verify',
      loggedOut: false,
      mayReceiveCodes: true,
      phoneAttemptsToday: 0,
      now,
    });
    spec
      .given([sms('1', T0)])
      .when(send(at(60_000)))
      .thenThrows('tfa_challenge_exists');
    const five = [0, 1, 2, 3, 4].map((i) => sms(String(i), at(i * 11 * 60_000 - 55 * 60_000)));
    spec
      .given(five)
      .when(send(at(60_000 + 0)))
      .thenThrows('sms_rate_limited');
  });

  it('preauth_phone_cap counts set-up attempts to a new number across accounts', () => {
    const setup = (phoneAttemptsToday: number): TfaCommand => ({
      type: 'SendSmsCode',
      userId,
      secretHash: h('9'),
      codeHash: h('c'),
      phone: '+14155550100',
      methodId: null,
      purpose: 'setup',
      loggedOut: false,
      mayReceiveCodes: true,
      phoneAttemptsToday,
      now: T0,
    });
    spec.given([]).when(setup(TFA_LIMITS.preauthPerPhonePerDay)).thenThrows('preauth_phone_cap');
    expect(decide(setup(TFA_LIMITS.preauthPerPhonePerDay - 1), initialState())).toHaveLength(1);
  });
});
