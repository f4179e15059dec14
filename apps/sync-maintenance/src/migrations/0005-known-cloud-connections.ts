import type { Migration } from '@rigmarket/event-sourcing';

/** Which account has which cloud connection (instance-lifecycle's public CloudConnectionListed/Removed). */
export const knownCloudConnections: Migration = {
  id: '0005-known-cloud-connections',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.known_cloud_connections (connection_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL)`,
    );
  },
};
