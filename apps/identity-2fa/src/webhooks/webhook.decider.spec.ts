import { deciderSpec } from '@rigmarket/testing';
import { webhookDecider } from './webhook.decider';
import type { WebhookEvent } from './webhook.events';

const spec = deciderSpec(webhookDecider);
const at = '2026-01-01T00:00:00.000Z';
const created: WebhookEvent = {
  type: 'WebhookEndpointCreated',
  data: {
    endpointId: 4,
    userId: 3,
    url: 'https://example.com/hook',
    eventTypes: ['instance.state_changed'],
    description: null,
    sealedSecret: 'v1.sealed',
    at,
  },
};
const failingOff: WebhookEvent = {
  type: 'WebhookEndpointDisabled',
  data: { endpointId: 4, userId: 3, reason: 'failing', consecutiveFailures: 5, at },
};

describe('webhook endpoint', () => {
  it('is created once per id', () => {
    const { endpointId, userId, url, eventTypes, description, sealedSecret } = created.data;
    const command = {
      type: 'CreateWebhookEndpoint' as const,
      endpointId,
      userId,
      url,
      eventTypes,
      description,
      sealedSecret,
      at,
    };
    spec.given([]).when(command).then([created]);
    spec.given([created]).when(command).thenThrows('webhook_endpoint_exists');
  });

  it('changes only what differs, and is enabled or disabled by its owner', () => {
    spec
      .given([created])
      .when({ type: 'UpdateWebhookEndpoint', requesterUserId: 3, url: 'https://example.com/hook', at })
      .then([]);
    spec
      .given([created])
      .when({ type: 'UpdateWebhookEndpoint', requesterUserId: 3, description: 'prod', enabled: false, at })
      .then([
        {
          type: 'WebhookEndpointUpdated',
          data: {
            endpointId: 4,
            url: 'https://example.com/hook',
            eventTypes: ['instance.state_changed'],
            description: 'prod',
            at,
          },
        },
        {
          type: 'WebhookEndpointDisabled',
          data: { endpointId: 4, userId: 3, reason: 'requested', consecutiveFailures: 0, at },
        },
      ]);
    spec
      .given([created, failingOff])
      .when({ type: 'UpdateWebhookEndpoint', requesterUserId: 3, enabled: true, at })
      .then([{ type: 'WebhookEndpointEnabled', data: { endpointId: 4, at } }]);
  });

  it('is disabled for failing once, and not at all once deleted', () => {
    spec
      .given([created])
      .when({ type: 'DisableFailingWebhookEndpoint', consecutiveFailures: 5, at })
      .then([failingOff]);
    spec
      .given([created, failingOff])
      .when({ type: 'DisableFailingWebhookEndpoint', consecutiveFailures: 6, at })
      .then([]);
    spec
      .given([created, { type: 'WebhookEndpointDeleted', data: { endpointId: 4, at } }])
      .when({ type: 'DisableFailingWebhookEndpoint', consecutiveFailures: 6, at })
      .then([]);
  });

  it('is no such endpoint to another account, and once deleted', () => {
    spec
      .given([created])
      .when({ type: 'RotateWebhookSecret', requesterUserId: 9, sealedSecret: 'v1.other', at })
      .thenThrows('webhook_endpoint_not_found');
    spec
      .given([created, { type: 'WebhookEndpointDeleted', data: { endpointId: 4, at } }])
      .when({ type: 'DeleteWebhookEndpoint', requesterUserId: 3, at })
      .thenThrows('webhook_endpoint_not_found');
  });
});
