import type { Migration } from '@rigmarket/event-sourcing';
import { authKeysExpiryMigration } from '@rigmarket/http-kit';

export const authApiKeyExpiry: Migration = {
  ...authKeysExpiryMigration(),
  id: '0013-auth-api-key-expiry',
  replaces: 'auth-0002-api-key-expiry',
};
