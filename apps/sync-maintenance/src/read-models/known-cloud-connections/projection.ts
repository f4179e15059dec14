import { CLOUD_CONNECTION_FEED, type CloudConnectionPublicEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Each cloud connection's account (no credentials: those never leave instance-lifecycle). */
export const knownCloudConnectionsProjection = defineProjection<CloudConnectionPublicEvent>({
  name: 'known_cloud_connections',
  version: 1,
  sources: CLOUD_CONNECTION_FEED.sources,
  tables: [`${SCHEMA}.known_cloud_connections`],
  eventTypes: CLOUD_CONNECTION_FEED.eventTypes,
  async apply(sql, event) {
    switch (event.type) {
      case 'CloudConnectionListed':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.known_cloud_connections (connection_id, user_id) VALUES ($1, $2) ON CONFLICT (connection_id) DO NOTHING`,
          [event.data.connectionId, event.data.userId],
        );
        return;
      case 'CloudConnectionRemoved':
        await sql.execute(`DELETE FROM ${SCHEMA}.known_cloud_connections WHERE connection_id = $1`, [
          event.data.connectionId,
        ]);
        return;
    }
  },
});
