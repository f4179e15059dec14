import { type ContextDefinition, streamFold } from '@rigmarket/event-sourcing';
import { authKeysProjection } from '@rigmarket/http-kit';
import { identityMigrations } from './migrations';
import { apiKeysProjection } from './read-models/api-keys/projection';
import { auditLogProjection } from './read-models/audit-log/projection';
import { sshKeysProjection } from './read-models/ssh-keys/projection';
import { teamRolesProjection } from './read-models/team-roles/projection';
import { teamsProjection } from './read-models/teams/projection';
import { tfaProjection } from './read-models/tfa/projection';
import { userCreditProjection } from './read-models/user-credit/projection';
import { usersProjection } from './read-models/users/projection';
import { webhookEndpointsProjection } from './read-models/webhook-endpoints/projection';
import { webhookInstanceOwnersProjection } from './read-models/webhook-instance-owners/projection';
import { SCHEMA } from './schema';
import { apiKeyDecider } from './api-keys/api-key.decider';
import { sshKeyDecider } from './ssh-keys/ssh-key.decider';
import { teamRoleDecider } from './team-roles/team-role.decider';
import { teamDecider } from './teams/team.decider';
import { tfaDecider } from './tfa/tfa.decider';
import { userDecider } from './users/user.decider';
import { webhookDecider } from './webhooks/webhook.decider';

export { SCHEMA };

const authKeys = authKeysProjection(SCHEMA);

/**
 * identity-2fa's storage: read models of its own events (inline) and of marketplace's ledger (subscribed).
 * Tables: migrations/; each read model's projection and queries: read-models/<name>/.
 */
export const identityContext: ContextDefinition = {
  context: 'identity',
  migrations: identityMigrations,
  inlineProjections: [
    usersProjection,
    apiKeysProjection,
    teamRolesProjection,
    teamsProjection,
    authKeys,
    tfaProjection,
    sshKeysProjection,
    auditLogProjection,
    webhookEndpointsProjection,
  ],
  // auth_api_keys: identity's own key events inline, instance-lifecycle's instance keys subscribed;
  // audit_log likewise: identity's actions inline, the other contexts' subscribed.
  subscribedProjections: [
    userCreditProjection,
    authKeys,
    auditLogProjection,
    webhookInstanceOwnersProjection,
  ],
  folds: {
    user: streamFold(userDecider),
    api_key: streamFold(apiKeyDecider),
    team_role: streamFold(teamRoleDecider),
    team: streamFold(teamDecider),
    ssh_key: streamFold(sshKeyDecider),
    tfa: streamFold(tfaDecider),
    webhook: streamFold(webhookDecider),
  },
  // Not in any event: webhook deliveries (pending ones too) and their attempts, each endpoint's run of
  // failures, the accounts marked low on credit (the delivery worker's own state).
  carriedTables: [
    { table: 'webhook_deliveries', orderBy: 'delivery_id' },
    { table: 'webhook_attempts', orderBy: 'delivery_id, attempt' },
    { table: 'webhook_endpoint_health', orderBy: 'endpoint_id' },
    { table: 'webhook_credit_low', orderBy: 'user_id' },
  ],
};
