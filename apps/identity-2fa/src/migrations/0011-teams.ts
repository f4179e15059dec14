import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Teams (read-models/teams): each team (an account of its own), its members with their roles, the team keys
 * each member holds, and pending invitations (the token's hash stays in the team's stream only).
 */
export const teams: Migration = {
  id: '0011-teams',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.teams (
        team_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        destroyed_at TIMESTAMPTZ
      )`);
    await sql.execute(`CREATE INDEX teams_by_owner ON ${s}.teams (owner_id) WHERE destroyed_at IS NULL`);
    await sql.execute(`
      CREATE TABLE ${s}.team_members (
        team_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        role TEXT NOT NULL,
        joined_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (team_id, user_id)
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.team_keys (
        key_id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.team_invitations (
        team_id INTEGER NOT NULL,
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        invited_by INTEGER NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (team_id, email)
      )`);
  },
};
