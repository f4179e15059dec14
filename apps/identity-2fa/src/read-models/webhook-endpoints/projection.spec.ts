import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { webhookEndpointsProjection } from './projection';

const at = (minute: number) => `2026-05-01T12:0${minute}:00.000Z`;

describe('webhook_endpoints projection', () => {
  const spec = projectionSpec(identityContext, webhookEndpointsProjection);
  afterAll(() => spec.close());

  it('keeps each endpoint with its latest settings, secret and state; a deleted one keeps its row, marked', () =>
    spec
      .given([
        {
          streamId: 'webhook-1',
          type: 'WebhookEndpointCreated',
          data: {
            endpointId: 1,
            userId: 2,
            url: 'https://a.example/hook',
            eventTypes: ['credit.low'],
            description: null,
            sealedSecret: 'v1.s1',
            at: at(0),
          },
        },
        {
          streamId: 'webhook-2',
          type: 'WebhookEndpointCreated',
          data: {
            endpointId: 2,
            userId: 2,
            url: 'https://b.example/hook',
            eventTypes: ['instance.state_changed'],
            description: 'b',
            sealedSecret: 'v1.s2',
            at: at(1),
          },
        },
        {
          streamId: 'webhook-1',
          type: 'WebhookEndpointUpdated',
          data: {
            endpointId: 1,
            url: 'https://a.example/v2',
            eventTypes: ['credit.low', 'credit.exhausted'],
            description: 'a',
            at: at(2),
          },
        },
        {
          streamId: 'webhook-1',
          type: 'WebhookSecretRotated',
          data: { endpointId: 1, sealedSecret: 'v1.s3', at: at(3) },
        },
        {
          streamId: 'webhook-1',
          type: 'WebhookEndpointDisabled',
          data: { endpointId: 1, userId: 2, reason: 'failing', consecutiveFailures: 40, at: at(4) },
        },
      ])
      .when({ streamId: 'webhook-2', type: 'WebhookEndpointDeleted', data: { endpointId: 2, at: at(5) } })
      .then(
        `SELECT endpoint_id, user_id, url, array_to_string(event_types, ',') AS types, description, sealed_secret,
                enabled, disabled_reason, deleted_at IS NOT NULL AS deleted FROM identity.webhook_endpoints ORDER BY endpoint_id`,
        [
          {
            endpoint_id: 1,
            user_id: 2,
            url: 'https://a.example/v2',
            types: 'credit.low,credit.exhausted',
            description: 'a',
            sealed_secret: 'v1.s3',
            enabled: false,
            disabled_reason: 'failing',
            deleted: false,
          },
          {
            endpoint_id: 2,
            user_id: 2,
            url: 'https://b.example/hook',
            types: 'instance.state_changed',
            description: 'b',
            sealed_secret: 'v1.s2',
            enabled: false,
            disabled_reason: null,
            deleted: true,
          },
        ],
      ));

  it('enables a disabled endpoint again', () =>
    spec
      .given([
        {
          streamId: 'webhook-3',
          type: 'WebhookEndpointCreated',
          data: {
            endpointId: 3,
            userId: 4,
            url: 'https://c.example/',
            eventTypes: ['sync.failed'],
            description: null,
            sealedSecret: 'v1.s',
            at: at(0),
          },
        },
        {
          streamId: 'webhook-3',
          type: 'WebhookEndpointDisabled',
          data: { endpointId: 3, userId: 4, reason: 'requested', consecutiveFailures: 0, at: at(1) },
        },
      ])
      .when({ streamId: 'webhook-3', type: 'WebhookEndpointEnabled', data: { endpointId: 3, at: at(2) } })
      .then(
        `SELECT endpoint_id, enabled, disabled_reason FROM identity.webhook_endpoints WHERE endpoint_id = 3`,
        [{ endpoint_id: 3, enabled: true, disabled_reason: null }],
      ));
});
