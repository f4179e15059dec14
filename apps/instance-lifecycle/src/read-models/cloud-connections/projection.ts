import { defineProjection } from '@rigmarket/event-sourcing';
import type { CloudConnectionEvent } from '../../cloud-connections/cloud-connection.decider';
import { SCHEMA } from '../../schema';

/** Each account's cloud connections, their credentials as sealed in the events. */
export const cloudConnectionsProjection = defineProjection<CloudConnectionEvent>({
  name: 'cloud_connections',
  version: 1,
  sources: [{ context: 'instance', streamType: 'cloud_connections' }],
  tables: [`${SCHEMA}.cloud_connections`],
  eventTypes: ['CloudConnectionAdded', 'CloudConnectionRemoved'],
  async apply(sql, event) {
    switch (event.type) {
      case 'CloudConnectionAdded': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.cloud_connections
             (connection_id, user_id, name, cloud_type, endpoint, region, access_key_hint, credentials_sealed, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (connection_id) DO NOTHING`,
          [
            d.connectionId,
            d.userId,
            d.name,
            d.cloudType,
            d.endpoint,
            d.region,
            d.accessKeyHint,
            d.credentialsSealed,
            d.at,
          ],
        );
        return;
      }
      case 'CloudConnectionRemoved':
        await sql.execute(
          `DELETE FROM ${SCHEMA}.cloud_connections WHERE connection_id = $1 AND user_id = $2`,
          [event.data.connectionId, event.data.userId],
        );
        return;
    }
  },
});
