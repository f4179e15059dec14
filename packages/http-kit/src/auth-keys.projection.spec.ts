import { projectionSpec } from '@rigmarket/testing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from './auth-keys.projection';

const context = {
  context: 'sync' as const,
  migrations: [authKeysMigration(), authKeysExpiryMigration()],
  inlineProjections: [],
  subscribedProjections: [],
};
const at = '2026-05-01T12:00:00.000Z';

describe('auth_api_keys projection (every app)', () => {
  const spec = projectionSpec(context, authKeysProjection('sync_maintenance'));
  afterAll(() => spec.close());

  it('keeps hashes only, follows a reset, and keeps a deleted key revoked', () =>
    spec
      .given([
        {
          streamId: 'api_key-5',
          type: 'ApiKeyCreated',
          data: {
            keyId: 5,
            userId: 2,
            name: null,
            keyHash: 'h1',
            permissions: null,
            kind: 'api',
            createdAt: at,
          },
        },
        {
          streamId: 'api_key-6',
          type: 'ApiKeyCreated',
          data: {
            keyId: 6,
            userId: 2,
            name: 'session',
            keyHash: 'h2',
            permissions: null,
            kind: 'session',
            createdAt: at,
            expiresAt: '2026-05-02T12:00:00.000Z',
          },
        },
        { streamId: 'api_key-5', type: 'ApiKeyReset', data: { keyId: 5, keyHash: 'h3', resetAt: at } },
      ])
      .when({ streamId: 'api_key-6', type: 'ApiKeyDeleted', data: { keyId: 6, deletedAt: at } })
      .then(
        `SELECT key_id, user_id, key_hash, kind, revoked, expires_at::text AS expires_at FROM sync_maintenance.auth_api_keys ORDER BY 1`,
        [
          { key_id: 5, user_id: 2, key_hash: 'h3', kind: 'api', revoked: false, expires_at: null },
          {
            key_id: 6,
            user_id: 2,
            key_hash: 'h2',
            kind: 'session',
            revoked: true,
            expires_at: '2026-05-02 12:00:00+00',
          },
        ],
      ));

  it("knows an instance's key by its hash while the instance exists", () =>
    spec
      .given([
        {
          streamId: 'instance-42',
          type: 'InstanceCreated',
          data: {
            instanceId: 42,
            renter: 7,
            machineId: 3,
            hostId: 2,
            offerId: 3001,
            numGpus: 1,
            gpuName: 'RTX 4090',
            dphTotal: 0.5,
            storageDph: 0.01,
            bidPrice: null,
            label: null,
            targetState: 'running',
            config: { image: 'busybox', runtype: 'args', disk: 10, env: {}, onstart: null, args: null },
            templateId: null,
            apiKeyHash: 'a'.repeat(64),
            createdAt: at,
          },
        },
      ])
      .when({ streamId: 'instance-42', type: 'InstanceDestroyed', data: { instanceId: 42, at } })
      .then(
        `SELECT key_id, user_id, key_hash, kind, revoked, permissions FROM sync_maintenance.auth_api_keys`,
        [
          {
            key_id: -42,
            user_id: 7,
            key_hash: 'a'.repeat(64),
            kind: 'instance',
            revoked: true,
            permissions: { api: { instance_write: {} } },
          },
        ],
      ));
});
