import type { Migration } from '@rigmarket/event-sourcing';

/** Each account's cloud connections (read model `cloud_connections`, from the private `cloud_connections-<userId>` streams), credentials sealed. */
export const cloudConnections: Migration = {
  id: '0017-cloud-connections',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE IF NOT EXISTS ${s}.cloud_connection_ids START 101`);
    await sql.execute(`
      CREATE TABLE ${s}.cloud_connections (
        connection_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        cloud_type TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        region TEXT NOT NULL,
        access_key_hint TEXT NOT NULL,
        credentials_sealed TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(`CREATE INDEX cloud_connections_user ON ${s}.cloud_connections (user_id)`);
  },
};
