import { deciderSpec } from '@rigmarket/testing';
import type { ApiKeyEvent } from '@rigmarket/contracts';
import { apiKeyDecider } from './api-key.decider';

const spec = deciderSpec(apiKeyDecider);
const now = '2026-01-01T00:00:00.000Z';
const created: ApiKeyEvent = {
  type: 'ApiKeyCreated',
  data: {
    keyId: 7,
    userId: 3,
    name: 'ci',
    keyHash: 'aa',
    permissions: { api: { user_read: {} } },
    kind: 'api',
    createdAt: now,
  },
};

describe('API key', () => {
  describe('When none exists', () => {
    it('creates it with the hash only', () =>
      spec
        .given([])
        .when({
          type: 'CreateApiKey',
          keyId: 7,
          userId: 3,
          name: 'ci',
          keyHash: 'aa',
          permissions: { api: { user_read: {} } },
          kind: 'api',
          at: now,
        })
        .then([created]));

    it('cannot be deleted', () =>
      spec
        .given([])
        .when({ type: 'DeleteApiKey', requesterUserId: 3, at: now })
        .thenThrows('api_key_not_found'));
  });

  describe('When active', () => {
    it('is reset to a new hash by its owner', () =>
      spec
        .given([created])
        .when({ type: 'ResetApiKey', requesterUserId: 3, newKeyHash: 'bb', at: now })
        .then([{ type: 'ApiKeyReset', data: { keyId: 7, keyHash: 'bb', resetAt: now } }]));

    it('is deleted by its owner', () =>
      spec
        .given([created])
        .when({ type: 'DeleteApiKey', requesterUserId: 3, at: now })
        .then([{ type: 'ApiKeyDeleted', data: { keyId: 7, deletedAt: now } }]));

    it('refuses another account', () =>
      spec
        .given([created])
        .when({ type: 'DeleteApiKey', requesterUserId: 4, at: now })
        .thenThrows('not_owner'));

    it('refuses a second creation with the same id', () =>
      spec
        .given([created])
        .when({
          type: 'CreateApiKey',
          keyId: 7,
          userId: 3,
          name: null,
          keyHash: 'cc',
          permissions: null,
          kind: 'api',
          at: now,
        })
        .thenThrows('api_key_exists'));
  });

  describe('When deleted', () => {
    const deleted: ApiKeyEvent = { type: 'ApiKeyDeleted', data: { keyId: 7, deletedAt: now } };
    it('cannot be reset', () =>
      spec
        .given([created, deleted])
        .when({ type: 'ResetApiKey', requesterUserId: 3, newKeyHash: 'dd', at: now })
        .thenThrows('api_key_not_found'));
    it('cannot be deleted twice', () =>
      spec
        .given([created, deleted])
        .when({ type: 'DeleteApiKey', requesterUserId: 3, at: now })
        .thenThrows('api_key_not_found'));
  });
});
