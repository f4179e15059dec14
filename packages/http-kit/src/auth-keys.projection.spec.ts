import { projectionSpec } from '@rigmarket/testing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from './auth-keys.projection';

const context = {
  context: 'sync' as const,
  migrations: [authKeysMigration(), authKeysExpiryMigration()],
  inlineProjections: [],
  subscribedProjections: [],
};
const at = '2026-05-01T12:00:00.000Z';
/** A rent's InstanceCreated, with its instance key's hash (null: from before instance keys). */
const created = (instanceId: number, apiKeyHash: string | null) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated' as const,
  data: {
    instanceId,
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
    apiKeyHash,
    createdAt: at,
  },
});

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
      .given([created(42, 'a'.repeat(64))])
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

  it('keeps the keys of several rents in one delivery, in order with the API keys between them', () =>
    spec
      .given([
        created(50, 'b'.repeat(64)),
        created(51, null),
        created(52, 'c'.repeat(64)),
        {
          streamId: 'api_key-9',
          type: 'ApiKeyCreated',
          data: {
            keyId: 9,
            userId: 7,
            name: null,
            keyHash: 'h9',
            permissions: null,
            kind: 'api',
            createdAt: at,
          },
        },
        { streamId: 'instance-50', type: 'InstanceDestroyed', data: { instanceId: 50, at } },
        created(53, 'd'.repeat(64)),
      ])
      .when(created(54, 'e'.repeat(64)))
      .then(`SELECT key_id, key_hash, kind, revoked FROM sync_maintenance.auth_api_keys ORDER BY key_id`, [
        { key_id: -54, key_hash: 'e'.repeat(64), kind: 'instance', revoked: false },
        { key_id: -53, key_hash: 'd'.repeat(64), kind: 'instance', revoked: false },
        { key_id: -52, key_hash: 'c'.repeat(64), kind: 'instance', revoked: false },
        { key_id: -50, key_hash: 'b'.repeat(64), kind: 'instance', revoked: true },
        { key_id: 9, key_hash: 'h9', kind: 'api', revoked: false },
      ]));
});
