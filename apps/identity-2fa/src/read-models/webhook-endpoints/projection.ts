import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import type { WebhookEvent } from '../../webhooks/webhook.events';

/** Each account's webhook endpoints with their sealed secret; a deleted one keeps its row with deleted_at. */
export const webhookEndpointsProjection = defineProjection<WebhookEvent>({
  name: 'webhook_endpoints',
  version: 1,
  sources: [{ context: 'identity', streamType: 'webhook' }],
  tables: [`${SCHEMA}.webhook_endpoints`],
  eventTypes: [
    'WebhookEndpointCreated',
    'WebhookEndpointUpdated',
    'WebhookSecretRotated',
    'WebhookEndpointDisabled',
    'WebhookEndpointEnabled',
    'WebhookEndpointDeleted',
  ],
  async apply(sql, event) {
    const t = `${SCHEMA}.webhook_endpoints`;
    const d = event.data;
    switch (event.type) {
      case 'WebhookEndpointCreated':
        await sql.execute(
          `INSERT INTO ${t} (endpoint_id, user_id, url, event_types, description, sealed_secret, enabled, created_at, updated_at)
           VALUES ($1, $2, $3, $4::text[], $5, $6, true, $7, $7) ON CONFLICT (endpoint_id) DO NOTHING`,
          [
            event.data.endpointId,
            event.data.userId,
            event.data.url,
            event.data.eventTypes,
            event.data.description,
            event.data.sealedSecret,
            event.data.at,
          ],
        );
        return;
      case 'WebhookEndpointUpdated':
        await sql.execute(
          `UPDATE ${t} SET url = $2, event_types = $3::text[], description = $4, updated_at = $5 WHERE endpoint_id = $1`,
          [
            event.data.endpointId,
            event.data.url,
            event.data.eventTypes,
            event.data.description,
            event.data.at,
          ],
        );
        return;
      case 'WebhookSecretRotated':
        await sql.execute(`UPDATE ${t} SET sealed_secret = $2, updated_at = $3 WHERE endpoint_id = $1`, [
          event.data.endpointId,
          event.data.sealedSecret,
          event.data.at,
        ]);
        return;
      case 'WebhookEndpointDisabled':
        await sql.execute(
          `UPDATE ${t} SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE endpoint_id = $1`,
          [event.data.endpointId, event.data.reason, event.data.at],
        );
        return;
      case 'WebhookEndpointEnabled':
        await sql.execute(
          `UPDATE ${t} SET enabled = true, disabled_reason = NULL, updated_at = $2 WHERE endpoint_id = $1`,
          [d.endpointId, d.at],
        );
        return;
      case 'WebhookEndpointDeleted':
        await sql.execute(`UPDATE ${t} SET enabled = false, deleted_at = $2 WHERE endpoint_id = $1`, [
          d.endpointId,
          d.at,
        ]);
        return;
    }
  },
});
