import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { identityMigrations } from './migrations';
import { authKeysProjection } from '@rigmarket/http-kit';
import { userCreditProjection } from './users/user-credit.read-model';
import { tfaProjection } from './tfa/tfa.read-models';
import { SCHEMA, apiKeysProjection, teamRolesProjection, usersProjection } from './identity.read-models';

/** identity-2fa's storage: read models of its own events (inline) and of marketplace's ledger (subscribed). */
export const identityContext: ContextDefinition = {
  context: 'identity',
  migrations: identityMigrations,
  inlineProjections: [
    usersProjection,
    apiKeysProjection,
    teamRolesProjection,
    authKeysProjection(SCHEMA),
    tfaProjection,
  ],
  subscribedProjections: [userCreditProjection],
};
