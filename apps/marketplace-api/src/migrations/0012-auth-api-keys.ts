import type { Migration } from '@rigmarket/event-sourcing';
import { authKeysMigration } from '@rigmarket/http-kit';

/** auth_api_keys, every app's projection of identity's key events (its DDL in http-kit). */
export const authApiKeys: Migration = {
  ...authKeysMigration(),
  id: '0012-auth-api-keys',
  replaces: 'auth-0001-api-keys',
};
