import type {
  ApiKeyEvent,
  EventEnvelope,
  TeamRoleCreated,
  TeamRoleDeleted,
  TeamRoleUpdated,
  UserEmailVerified,
  UserProfileUpdated,
  UserRegistered,
} from '@rigmarket/contracts';
import type { Projection, Sql } from '@rigmarket/event-sourcing';
import type { TeamRoleOwned } from './team-roles/team-role.decider';

export const SCHEMA = 'identity';

type UserPublicEvent = UserRegistered | UserEmailVerified | UserProfileUpdated;

export const usersProjection: Projection = {
  name: 'users',
  version: 1,
  sources: [{ context: 'identity', streamType: 'user' }],
  tables: [`${SCHEMA}.users`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as UserPublicEvent;
    switch (event.type) {
      case 'UserRegistered':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.users (user_id, email, username, full_name, is_admin, registered_at) VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            event.data.userId,
            event.data.email,
            event.data.username,
            event.data.fullName,
            event.data.isAdmin,
            event.data.registeredAt,
          ],
        );
        return;
      case 'UserEmailVerified':
        await sql.execute(`UPDATE ${SCHEMA}.users SET email_verified_at = $2 WHERE user_id = $1`, [
          event.data.userId,
          event.data.verifiedAt,
        ]);
        return;
      case 'UserProfileUpdated':
        if (event.data.fullName !== undefined) {
          await sql.execute(`UPDATE ${SCHEMA}.users SET full_name = $2 WHERE user_id = $1`, [
            event.data.userId,
            event.data.fullName,
          ]);
        }
        if (event.data.sshKey !== undefined) {
          await sql.execute(`UPDATE ${SCHEMA}.users SET ssh_key = $2 WHERE user_id = $1`, [
            event.data.userId,
            event.data.sshKey,
          ]);
        }
        return;
      default:
        return;
    }
  },
};

export const apiKeysProjection: Projection = {
  name: 'api_keys',
  version: 1,
  sources: [{ context: 'identity', streamType: 'api_key' }],
  tables: [`${SCHEMA}.api_keys`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as ApiKeyEvent;
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
};

type TeamRolePublicEvent = TeamRoleCreated | TeamRoleUpdated | TeamRoleDeleted | TeamRoleOwned;

export const teamRolesProjection: Projection = {
  name: 'team_roles',
  version: 1,
  sources: [{ context: 'identity', streamType: 'team_role' }],
  tables: [`${SCHEMA}.team_roles`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as TeamRolePublicEvent;
    switch (event.type) {
      case 'TeamRoleCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.team_roles (role_id, name, permissions, built_in) VALUES ($1, $2, $3, $4)`,
          [event.data.roleId, event.data.name, JSON.stringify(event.data.permissions), event.data.builtIn],
        );
        return;
      case 'TeamRoleOwned':
        await sql.execute(`UPDATE ${SCHEMA}.team_roles SET owner_id = $2 WHERE role_id = $1`, [
          event.data.roleId,
          event.data.ownerId,
        ]);
        return;
      case 'TeamRoleUpdated':
        await sql.execute(`UPDATE ${SCHEMA}.team_roles SET name = $2, permissions = $3 WHERE role_id = $1`, [
          event.data.roleId,
          event.data.name,
          JSON.stringify(event.data.permissions),
        ]);
        return;
      case 'TeamRoleDeleted':
        await sql.execute(`DELETE FROM ${SCHEMA}.team_roles WHERE role_id = $1`, [event.data.roleId]);
        return;
    }
  },
};
