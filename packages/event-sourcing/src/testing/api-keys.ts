import type { ApiKeyCreated } from '@rigmarket/contracts';

/** identity's creation of API key `keyId` (user 2's), the source event of the package's read-model specs. */
export const apiKeyCreated = (keyId: number): ApiKeyCreated => ({
  type: 'ApiKeyCreated',
  data: {
    keyId,
    userId: 2,
    name: null,
    keyHash: 'a'.repeat(64),
    permissions: null,
    kind: 'api',
    createdAt: '2026-05-01T12:00:00.000Z',
  },
});
