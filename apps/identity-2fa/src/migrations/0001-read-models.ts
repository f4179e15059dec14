import type { Migration } from '@rigmarket/event-sourcing';

export const readModels: Migration = {
  id: '0001-read-models',
  replaces: '0002-identity-read-models',
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
