import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';
import {
  userCreditExactMigration,
  userCreditMigration,
  userCreditProjection,
} from './users/user-credit.read-model';
import { tfaProjection, tfaReadModelsMigration } from './tfa/tfa.read-models';
import {
  SCHEMA,
  apiKeyExpiryMigration,
  apiKeysProjection,
  identityReadModelsMigration,
  teamRolesProjection,
  usersProjection,
} from './identity.read-models';

/** identity-2fa's storage: read models of its own events (inline) and of marketplace's ledger (subscribed). */
export const identityContext: ContextDefinition = {
  context: 'identity',
  migrations: [
    identityReadModelsMigration,
    authKeysMigration(),
    authKeysExpiryMigration(),
    tfaReadModelsMigration,
    userCreditMigration,
    userCreditExactMigration,
    apiKeyExpiryMigration,
  ],
  inlineProjections: [
    usersProjection,
    apiKeysProjection,
    teamRolesProjection,
    authKeysProjection(SCHEMA),
    tfaProjection,
  ],
  subscribedProjections: [userCreditProjection],
};
