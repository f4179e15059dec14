import type { Migration } from '@rigmarket/event-sourcing';
import { readModels } from './0001-read-models';
import { tfa } from './0002-tfa';
import { userCredit } from './0003-user-credit';
import { userCreditExactMoney } from './0004-user-credit-exact-money';
import { authApiKeys } from './0005-auth-api-keys';
import { authApiKeyExpiry } from './0006-auth-api-key-expiry';
import { apiKeyExpiry } from './0007-api-key-expiry';
import { sshKeys } from './0008-ssh-keys';
import { auditLog } from './0009-audit-log';
import { subaccountsAndSettings } from './0010-subaccounts-and-settings';
import { teams } from './0011-teams';
import { webhooks } from './0012-webhooks';

/** identity-2fa's migrations, one file each, in the order they run (after the core ones every context has). */
export const identityMigrations: readonly Migration[] = [
  readModels,
  tfa,
  userCredit,
  userCreditExactMoney,
  authApiKeys,
  authApiKeyExpiry,
  apiKeyExpiry,
  sshKeys,
  auditLog,
  subaccountsAndSettings,
  teams,
  webhooks,
];
