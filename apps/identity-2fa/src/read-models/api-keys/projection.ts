import type { ApiKeyEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const apiKeysProjection = defineProjection<ApiKeyEvent>({
  name: 'api_keys',
  version: 1,
  sources: [{ context: 'identity', streamType: 'api_key' }],
  tables: [`${SCHEMA}.api_keys`],
  eventTypes: ['ApiKeyCreated', 'ApiKeyReset', 'ApiKeyDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'ApiKeyCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.api_keys (key_id, user_id, name, permissions, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            event.data.keyId,
            event.data.userId,
            event.data.name,
            JSON.stringify(event.data.permissions),
            event.data.kind,
            event.data.createdAt,
            event.data.expiresAt ?? null,
          ],
        );
        return;
      case 'ApiKeyReset':
        await sql.execute(`UPDATE ${SCHEMA}.api_keys SET reset_at = $2 WHERE key_id = $1`, [
          event.data.keyId,
          event.data.resetAt,
        ]);
        return;
      case 'ApiKeyDeleted':
        await sql.execute(`UPDATE ${SCHEMA}.api_keys SET deleted_at = $2 WHERE key_id = $1`, [
          event.data.keyId,
          event.data.deletedAt,
        ]);
        return;
    }
  },
});
