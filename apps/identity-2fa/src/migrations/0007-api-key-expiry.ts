import type { Migration } from '@rigmarket/event-sourcing';

/** Sessions expire (ApiKeyCreated.expiresAt); the key list shows when. */
export const apiKeyExpiry: Migration = {
  id: '0007-api-key-expiry',
  replaces: 'sessions-0001-api-key-expiry',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.api_keys ADD COLUMN expires_at TIMESTAMPTZ`);
  },
};
