import { TFA_LIMITS } from './tfa.state';
import { T0, at, codes, emailChallenge, h, spec, totpAdded, userId } from './testing/fixtures';

describe('2FA add-method authorization', () => {
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

  it('a TOTP authorization is used once and opens the 30-minute window', () => {
    const totpChallenge = {
      type: 'TfaChallengeIssued' as const,
      data: {
        userId,
        secretHash: h('6'),
        channel: 'totp' as const,
        purpose: 'authorize' as const,
        codeHash: null,
        phone: null,
        methodId: 3,
        loggedOut: false,
        issuedAt: T0,
        expiresAt: at(TFA_LIMITS.challengeTtlMs),
      },
    };
    spec
      .given([totpAdded, codes])
      .when({
        type: 'StartAuthorization',
        userId,
        tfaMethod: 'totp',
        methodId: null,
        backupCodeHash: null,
        secretHash: h('6'),
        codeHash: h('c'),
        emailVerified: false,
        now: T0,
      })
      .then([totpChallenge]);
    spec
      .given([totpAdded, codes, totpChallenge])
      .when({
        type: 'ConfirmAuthorization',
        userId,
        secretHash: h('6'),
        proof: { kind: 'totp', methodId: null, matches: { 3: 101 } },
        now: at(1000),
      })
      .then([
        {
          type: 'TfaVerificationSucceeded',
          data: { userId, lockKey: 3, secretHash: null, totpStep: 101, at: at(1000) },
        },
        { type: 'TfaChallengeCancelled', data: { userId, secretHash: h('6'), reason: 'used' } },
        {
          type: 'TfaNewMethodAuthorized',
          data: { userId, until: at(1000 + TFA_LIMITS.authorizationMs), via: 'totp' },
        },
      ]);
  });
});
