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
import type { Migration, Projection, Sql } from '@rigmarket/event-sourcing';
import type { TeamRoleOwned } from './team-roles/team-role.decider';

export const SCHEMA = 'identity';

export const identityReadModelsMigration: Migration = {
  id: '0002-identity-read-models',
  async up(sql, s) {
    // Ids 1 are the seeded admin and its key; roles 1-4 are built in.
    await sql.execute(`CREATE SEQUENCE ${s}.user_ids START 2`);
    await sql.execute(`CREATE SEQUENCE ${s}.api_key_ids START 2`);
    await sql.execute(`CREATE SEQUENCE ${s}.team_role_ids START 100`);
    await sql.execute(`
      CREATE TABLE ${s}.users (
        user_id INTEGER PRIMARY KEY,
        email TEXT NOT NULL,
        username TEXT,
        full_name TEXT,
        ssh_key TEXT,
        is_admin BOOLEAN NOT NULL DEFAULT FALSE,
        email_verified_at TIMESTAMPTZ,
        registered_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(`CREATE UNIQUE INDEX users_email_unique ON ${s}.users (lower(email))`);
    await sql.execute(`
      CREATE TABLE ${s}.api_keys (
        key_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        name TEXT,
        permissions JSONB,
        kind TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        reset_at TIMESTAMPTZ,
        deleted_at TIMESTAMPTZ
      )`);
    await sql.execute(`CREATE INDEX api_keys_by_user ON ${s}.api_keys (user_id, key_id)`);
    await sql.execute(`
      CREATE TABLE ${s}.team_roles (
        role_id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        permissions JSONB NOT NULL,
        built_in BOOLEAN NOT NULL,
        owner_id INTEGER
      )`);
    await sql.execute(
      `CREATE UNIQUE INDEX team_roles_name_unique ON ${s}.team_roles (COALESCE(owner_id, 0), name)`,
    );
  },
};

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

/** Sessions expire (ApiKeyCreated.expiresAt); the key list shows when. */
export const apiKeyExpiryMigration: Migration = {
  id: 'sessions-0001-api-key-expiry',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.api_keys ADD COLUMN expires_at TIMESTAMPTZ`);
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
