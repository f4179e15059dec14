import { DomainError } from '@rigmarket/contracts';
import type { WebhookEvent } from './webhook.events';

export type WebhookState =
  | { status: 'none' }
  | {
      status: 'active' | 'deleted';
      endpointId: number;
      userId: number;
      url: string;
      eventTypes: string[];
      description: string | null;
      enabled: boolean;
    };

export type WebhookCommand = { at: string } & (
  | {
      type: 'CreateWebhookEndpoint';
      endpointId: number;
      userId: number;
      url: string;
      eventTypes: string[];
      description: string | null;
      sealedSecret: string;
    }
  | {
      type: 'UpdateWebhookEndpoint';
      requesterUserId: number;
      url?: string;
      eventTypes?: string[];
      description?: string | null;
      enabled?: boolean;
    }
  | { type: 'RotateWebhookSecret'; requesterUserId: number; sealedSecret: string }
  | { type: 'DeleteWebhookEndpoint'; requesterUserId: number }
  /** The delivery worker's: the endpoint failed too often in a row. */
  | { type: 'DisableFailingWebhookEndpoint'; consecutiveFailures: number }
);

export const initialState = (): WebhookState => ({ status: 'none' });

export function evolve(state: WebhookState, event: WebhookEvent): WebhookState {
  switch (event.type) {
    case 'WebhookEndpointCreated': {
      const { endpointId, userId, url, eventTypes, description } = event.data;
      return { status: 'active', endpointId, userId, url, eventTypes, description, enabled: true };
    }
    case 'WebhookEndpointUpdated':
      if (state.status === 'none') return state;
      return {
        ...state,
        url: event.data.url,
        eventTypes: event.data.eventTypes,
        description: event.data.description,
      };
    case 'WebhookSecretRotated':
      return state;
    case 'WebhookEndpointDisabled':
      return state.status === 'none' ? state : { ...state, enabled: false };
    case 'WebhookEndpointEnabled':
      return state.status === 'none' ? state : { ...state, enabled: true };
    case 'WebhookEndpointDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted', enabled: false };
  }
}

/** Another account's endpoint, or a deleted one, is "no such endpoint": an id tells nobody whether it exists. */
function owned(state: WebhookState, requesterUserId: number) {
  if (state.status !== 'active' || state.userId !== requesterUserId)
    throw new DomainError('webhook_endpoint_not_found', 'No such webhook endpoint');
  return state;
}

const sameTypes = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((t, i) => t === b[i]);

export function decide(command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  const { at } = command;
  switch (command.type) {
    case 'CreateWebhookEndpoint': {
      if (state.status !== 'none')
        throw new DomainError('webhook_endpoint_exists', 'This webhook endpoint id is taken');
      const { endpointId, userId, url, eventTypes, description, sealedSecret } = command;
      return [
        {
          type: 'WebhookEndpointCreated',
          data: { endpointId, userId, url, eventTypes, description, sealedSecret, at },
        },
      ];
    }
    case 'UpdateWebhookEndpoint': {
      const endpoint = owned(state, command.requesterUserId);
      const events: WebhookEvent[] = [];
      const url = command.url ?? endpoint.url;
      const eventTypes = command.eventTypes ?? endpoint.eventTypes;
      const description = command.description === undefined ? endpoint.description : command.description;
      if (
        url !== endpoint.url ||
        !sameTypes(eventTypes, endpoint.eventTypes) ||
        description !== endpoint.description
      )
        events.push({
          type: 'WebhookEndpointUpdated',
          data: { endpointId: endpoint.endpointId, url, eventTypes, description, at },
        });
      if (command.enabled === true && !endpoint.enabled)
        events.push({ type: 'WebhookEndpointEnabled', data: { endpointId: endpoint.endpointId, at } });
      if (command.enabled === false && endpoint.enabled)
        events.push({
          type: 'WebhookEndpointDisabled',
          data: {
            endpointId: endpoint.endpointId,
            userId: endpoint.userId,
            reason: 'requested',
            consecutiveFailures: 0,
            at,
          },
        });
      return events;
    }
    case 'RotateWebhookSecret': {
      const endpoint = owned(state, command.requesterUserId);
      return [
        {
          type: 'WebhookSecretRotated',
          data: { endpointId: endpoint.endpointId, sealedSecret: command.sealedSecret, at },
        },
      ];
    }
    case 'DeleteWebhookEndpoint': {
      const endpoint = owned(state, command.requesterUserId);
      return [{ type: 'WebhookEndpointDeleted', data: { endpointId: endpoint.endpointId, at } }];
    }
    case 'DisableFailingWebhookEndpoint': {
      // Already disabled or deleted (another worker got there first, or the owner did): nothing to do.
      if (state.status !== 'active' || !state.enabled) return [];
      return [
        {
          type: 'WebhookEndpointDisabled',
          data: {
            endpointId: state.endpointId,
            userId: state.userId,
            reason: 'failing',
            consecutiveFailures: command.consecutiveFailures,
            at,
          },
        },
      ];
    }
  }
}

export const webhookDecider = { initialState, evolve, decide };
export const webhookStreamId = (endpointId: number): string => `webhook-${endpointId}`;
