import { hashKey } from '@rigmarket/http-kit';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import type { TfaEvent, TfaMethodAdded } from '../../tfa/tfa.events';
import { tfaProjection } from './projection';

const at = '2026-05-01T12:00:00.000Z';
const added = (userId: number, methodId: number): SpecEvent<TfaEvent> => ({
  streamId: `tfa-${userId}`,
  type: 'TfaMethodAdded',
  data: {
    userId,
    methodId,
    method: 'totp',
    label: null,
    phone: null,
    isPrimary: true,
  } as TfaMethodAdded['data'],
});

describe('tfa projection', () => {
  const spec = projectionSpec(identityContext, tfaProjection);
  afterAll(() => spec.close());

  it("counts an account's methods, turns 2FA off with the last, and marks legacy accounts", () =>
    spec
      .given([
        added(2, 1),
        added(2, 2),
        { streamId: 'tfa-2', type: 'TfaMethodRemoved', data: { userId: 2, methodId: 1, at } },
        added(3, 3),
        { streamId: 'tfa-3', type: 'TfaDisabled', data: { userId: 3, at } },
      ])
      .when({ streamId: 'tfa-4', type: 'TfaLegacyMarked', data: { userId: 4, phone: '+15550100', at } })
      .then(`SELECT user_id, enabled, legacy, method_count FROM identity.tfa_accounts ORDER BY 1`, [
        { user_id: 2, enabled: true, legacy: false, method_count: 1 },
        { user_id: 3, enabled: false, legacy: false, method_count: 0 },
        { user_id: 4, enabled: true, legacy: true, method_count: 0 },
      ]));

  it('maps challenge secrets (hashes) to their user, and counts SMS set-ups per phone hash', () =>
    spec
      .given([
        {
          streamId: 'tfa-2',
          type: 'TfaChallengeIssued',
          data: {
            userId: 2,
            secretHash: 's1',
            channel: 'sms',
            purpose: 'setup',
            codeHash: 'c1',
            phone: '+15550100',
            methodId: null,
            loggedOut: false,
            issuedAt: at,
          },
        },
      ])
      .when({
        streamId: 'tfa-2',
        type: 'TfaChallengeCodeReplaced',
        data: {
          userId: 2,
          oldSecretHash: 's1',
          secretHash: 's2',
          codeHash: 'c2',
          issuedAt: at,
          expiresAt: at,
        },
      })
      .then(
        `SELECT (SELECT json_agg(secret_hash ORDER BY secret_hash) FROM identity.tfa_secrets WHERE user_id = 2) AS secrets,
                (SELECT json_agg(phone_hash) FROM identity.tfa_phone_setups) AS phones`,
        [{ secrets: ['s1', 's2'], phones: [hashKey('+15550100')] }],
      ));
});
