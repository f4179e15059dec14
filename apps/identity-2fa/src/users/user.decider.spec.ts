import { createHash } from 'node:crypto';
import { deciderSpec } from '@rigmarket/testing';
import { userDecider } from './user.decider';
import type { UserEvent } from './user.events';

const spec = deciderSpec(userDecider);
const now = '2026-01-01T00:00:00.000Z';
const hash = (v: string) => createHash('sha256').update(v).digest('hex');
const registered: UserEvent = {
  type: 'UserRegistered',
  data: { userId: 5, email: 'a@b.c', username: null, fullName: null, isAdmin: false, registeredAt: now },
};
const passwordSet: UserEvent = { type: 'UserPasswordSet', data: { userId: 5, passwordHash: 'scrypt$x' } };
const verificationRequested: UserEvent = {
  type: 'UserEmailVerificationRequested',
  data: { userId: 5, tokenHash: hash('tok'), expiresAt: '2026-01-02T00:00:00.000Z' },
};
const register = {
  type: 'RegisterUser' as const,
  userId: 5,
  email: 'a@b.c',
  username: null,
  fullName: null,
  passwordHash: 'scrypt$x',
  isAdmin: false,
  preVerified: false,
  verification: { tokenHash: hash('tok'), expiresAt: '2026-01-02T00:00:00.000Z' },
  at: now,
};

describe('User', () => {
  it('registers with a password and a pending verification', () =>
    spec.given([]).when(register).then([registered, passwordSet, verificationRequested]));

  it('registers the seeded admin as verified', () =>
    spec
      .given([])
      .when({ ...register, passwordHash: null, preVerified: true, verification: null })
      .then([registered, { type: 'UserEmailVerified', data: { userId: 5, verifiedAt: now } }]));

  it('cannot register twice', () => spec.given([registered]).when(register).thenThrows('user_exists'));

  describe('When verification is pending', () => {
    const given = [registered, passwordSet, verificationRequested];
    it('verifies with the right code', () =>
      spec
        .given(given)
        .when({ type: 'VerifyEmail', tokenHash: hash('tok'), at: now })
        .then([{ type: 'UserEmailVerified', data: { userId: 5, verifiedAt: now } }]));
    it('refuses a wrong code', () =>
      spec
        .given(given)
        .when({ type: 'VerifyEmail', tokenHash: hash('nope'), at: now })
        .thenThrows('invalid_verification_token'));
    it('refuses an expired code', () =>
      spec
        .given(given)
        .when({ type: 'VerifyEmail', tokenHash: hash('tok'), at: '2026-01-03T00:00:00.000Z' })
        .thenThrows('verification_token_expired'));
  });

  it('verifying again changes nothing', () =>
    spec
      .given([
        registered,
        passwordSet,
        verificationRequested,
        { type: 'UserEmailVerified', data: { userId: 5, verifiedAt: now } },
      ])
      .when({ type: 'VerifyEmail', tokenHash: hash('tok'), at: now })
      .thenNothingHappened());

  it('records a login only when the password matched', () => {
    spec
      .given([registered, passwordSet])
      .when({ type: 'RecordLogin', passwordMatches: false, sessionKeyId: 9, at: now })
      .thenThrows('invalid_credentials');
    spec
      .given([registered, passwordSet])
      .when({ type: 'RecordLogin', passwordMatches: true, sessionKeyId: 9, at: now })
      .then([{ type: 'UserLoggedIn', data: { userId: 5, sessionKeyId: 9, at: now } }]);
  });

  it('refuses a login to an unknown account', () =>
    spec
      .given([])
      .when({ type: 'RecordLogin', passwordMatches: true, sessionKeyId: 9, at: now })
      .thenThrows('invalid_credentials'));

  describe('Subaccounts and settings', () => {
    it('registers a subaccount under its parent', () =>
      spec
        .given([])
        .when({ ...register, parent: { userId: 2, hostOnly: true } })
        .then([
          registered,
          passwordSet,
          { type: 'SubaccountRegistered', data: { userId: 5, parentId: 2, hostOnly: true } },
          verificationRequested,
        ]));

    it('set user: records the name and the settings that change', () =>
      spec
        .given([registered])
        .when({
          type: 'UpdateUser',
          fullName: 'Ada L',
          settings: { billaddress_city: 'Paris', balance_threshold: 5 },
          at: now,
        })
        .then([
          { type: 'UserProfileUpdated', data: { userId: 5, fullName: 'Ada L' } },
          {
            type: 'UserSettingsChanged',
            data: { userId: 5, settings: { billaddress_city: 'Paris', balance_threshold: 5 } },
          },
        ]));

    it('set user: a value equal to the current one is no change', () =>
      spec
        .given([
          registered,
          { type: 'UserProfileUpdated', data: { userId: 5, fullName: 'Ada L' } },
          { type: 'UserSettingsChanged', data: { userId: 5, settings: { billaddress_city: 'Paris' } } },
        ])
        .when({
          type: 'UpdateUser',
          fullName: 'Ada L',
          settings: { billaddress_city: 'Paris', phone_number: '+33 1 23' },
          at: now,
        })
        .then([
          { type: 'UserSettingsChanged', data: { userId: 5, settings: { phone_number: '+33 1 23' } } },
        ]));

    it('set user: refused for an account that does not exist', () =>
      spec
        .given([])
        .when({ type: 'UpdateUser', settings: { phone_number: '123456' }, at: now })
        .thenThrows('user_not_found'));
  });
});
