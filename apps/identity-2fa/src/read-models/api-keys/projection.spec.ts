import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { apiKeysProjection } from './projection';

const at = (minute: number) => `2026-05-01T12:0${minute}:00.000Z`;

describe('api_keys projection', () => {
  const spec = projectionSpec(identityContext, apiKeysProjection);
  afterAll(() => spec.close());

  it('lists keys with their scope and when they were reset or deleted, never their hash', () =>
    spec
      .given([
        {
          streamId: 'api_key-5',
          type: 'ApiKeyCreated',
          data: {
            keyId: 5,
            userId: 2,
            name: 'ci',
            keyHash: 'h1',
            permissions: { api: { machine_read: {} } },
            kind: 'api',
            createdAt: at(0),
          },
        },
        {
          streamId: 'api_key-6',
          type: 'ApiKeyCreated',
          data: {
            keyId: 6,
            userId: 2,
            name: null,
            keyHash: 'h2',
            permissions: null,
            kind: 'session',
            createdAt: at(1),
            expiresAt: '2026-05-02T12:01:00.000Z',
          },
        },
        { streamId: 'api_key-5', type: 'ApiKeyReset', data: { keyId: 5, keyHash: 'h3', resetAt: at(2) } },
      ])
      .when({ streamId: 'api_key-6', type: 'ApiKeyDeleted', data: { keyId: 6, deletedAt: at(3) } })
      .then(
        `SELECT to_jsonb(k) - 'created_at' - 'reset_at' - 'deleted_at' - 'expires_at' AS row, reset_at IS NOT NULL AS reset,
                deleted_at IS NOT NULL AS deleted, expires_at::text AS expires FROM identity.api_keys k ORDER BY key_id`,
        [
          {
            row: {
              key_id: 5,
              user_id: 2,
              name: 'ci',
              permissions: { api: { machine_read: {} } },
              kind: 'api',
            },
            reset: true,
            deleted: false,
            expires: null,
          },
          {
            row: { key_id: 6, user_id: 2, name: null, permissions: null, kind: 'session' },
            reset: false,
            deleted: true,
            expires: '2026-05-02 12:01:00+00',
          },
        ],
      ));
});
