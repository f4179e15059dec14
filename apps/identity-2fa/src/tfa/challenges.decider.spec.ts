import { decide } from './tfa.decider';
import type { TfaCommand } from './tfa.decider';
import { TFA_LIMITS, evolve, initialState } from './tfa.state';
import { T0, at, h, smsChallenge, spec, userId } from './testing/fixtures';

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

describe('2FA challenges', () => {
  it('SMS: a valid recent code blocks a new send (tfa_challenge_exists); too many sends are rate limited', () => {
    spec
      .given([smsChallenge('1', T0)])
      .when(send(at(60_000)))
      .thenThrows('tfa_challenge_exists');
    const five = [0, 1, 2, 3, 4].map((i) => smsChallenge(String(i), at(i * 11 * 60_000 - 55 * 60_000)));
    spec
      .given(five)
      .when(send(at(60_000 + 0)))
      .thenThrows('sms_rate_limited');
  });

  it('an SMS that could not be delivered no longer blocks a new send', () => {
    const cancelled = {
      type: 'TfaChallengeCancelled' as const,
      data: { userId, secretHash: h('1'), reason: 'delivery_failed' },
    };
    spec
      .given([smsChallenge('1', T0)])
      .when({ type: 'CancelChallenge', userId, secretHash: h('1'), reason: 'delivery_failed' })
      .then([cancelled]);
    expect(
      decide(send(at(60_000)), [smsChallenge('1', T0), cancelled].reduce(evolve, initialState())),
    ).toHaveLength(1);
  });

  it('a resend without a secret finds the active challenge by number and replaces its code', () => {
    spec
      .given([smsChallenge('1', T0)])
      .when({
        type: 'ResendSmsCode',
        userId,
        secretHash: null,
        newSecretHash: h('2'),
        codeHash: h('d'),
        phone: '+14155550100',
        methodId: null,
        now: at(60_000),
      })
      .then([
        {
          type: 'TfaChallengeCodeReplaced',
          data: {
            userId,
            oldSecretHash: h('1'),
            secretHash: h('2'),
            codeHash: h('d'),
            issuedAt: at(60_000),
            expiresAt: at(60_000 + TFA_LIMITS.challengeTtlMs),
          },
        },
      ]);
    spec
      .given([])
      .when({
        type: 'ResendSmsCode',
        userId,
        secretHash: null,
        newSecretHash: h('2'),
        codeHash: h('d'),
        phone: '+14155550100',
        methodId: null,
        now: at(60_000),
      })
      .thenThrows('no_challenge_found');
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
