import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';
import { tfaProjection, tfaReadModelsMigration } from './tfa/tfa.read-models';
import { SCHEMA, apiKeysProjection, identityReadModelsMigration, teamRolesProjection, usersProjection } from './identity.read-models';

/** identity-2fa's storage: its migrations and read models, all fed inline from its own events. */
export const identityContext: ContextDefinition = {
  context: 'identity',
  migrations: [identityReadModelsMigration, authKeysMigration(), tfaReadModelsMigration],
  inlineProjections: [usersProjection, apiKeysProjection, teamRolesProjection, authKeysProjection(SCHEMA), tfaProjection],
  subscribedProjections: [],
};
