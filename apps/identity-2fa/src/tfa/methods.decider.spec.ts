import { decide } from './tfa.decider';
import type { TfaEvent } from './tfa.events';
import { evolve, initialState } from './tfa.state';
import {
  T0,
  at,
  authorized,
  codes,
  confirmTotp,
  h,
  smsAdded,
  spec,
  totpAdded,
  totpProof,
  userId,
} from './testing/fixtures';

describe('2FA methods and backup codes', () => {
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

  it('making a method primary takes primary from the others', () => {
    spec
      .given([totpAdded, codes, smsAdded(4, '+14155550100')])
      .when({ type: 'UpdateMethod', userId, methodId: null, method: 'sms', isPrimary: true, now: T0 })
      .then([{ type: 'TfaMethodUpdated', data: { userId, methodId: 4, isPrimary: true, at: T0 } }]);
    const state = [
      totpAdded,
      codes,
      smsAdded(4, '+14155550100'),
      { type: 'TfaMethodUpdated', data: { userId, methodId: 4, isPrimary: true, at: T0 } } as TfaEvent,
    ].reduce(evolve, initialState());
    expect(state.methods.map((m) => [m.id, m.isPrimary])).toEqual([
      [3, false],
      [4, true],
    ]);
    spec
      .given([totpAdded, codes, smsAdded(4, '+14155550100'), smsAdded(5, '+14155550101')])
      .when({ type: 'UpdateMethod', userId, methodId: null, method: 'sms', label: 'x', now: T0 })
      .thenThrows('bad_request');
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
});
