import type { DomainEvent } from '@rigmarket/contracts';

/**
 * Events of one webhook endpoint (`webhook-<id>`), private to identity-2fa. The signing secret travels
 * only sealed (AES-256-GCM under identity's sealing key, `sealedSecret`): never in the clear, and private
 * events never leave the context's store.
 */
export type WebhookEndpointCreated = DomainEvent<
  'WebhookEndpointCreated',
  {
    endpointId: number;
    userId: number;
    url: string;
    eventTypes: string[];
    description: string | null;
    sealedSecret: string;
    at: string;
  }
>;
export type WebhookEndpointUpdated = DomainEvent<
  'WebhookEndpointUpdated',
  { endpointId: number; url: string; eventTypes: string[]; description: string | null; at: string }
>;
export type WebhookSecretRotated = DomainEvent<
  'WebhookSecretRotated',
  { endpointId: number; sealedSecret: string; at: string }
>;
/**
 * Deliveries stop: the owner asked (`requested`), or the endpoint failed `consecutiveFailures` attempts in
 * a row (`failing`, no actor: the delivery worker disabled it). `userId` names the owner for the audit log.
 */
export type WebhookEndpointDisabled = DomainEvent<
  'WebhookEndpointDisabled',
  {
    endpointId: number;
    userId: number;
    reason: 'requested' | 'failing';
    consecutiveFailures: number;
    at: string;
  }
>;
export type WebhookEndpointEnabled = DomainEvent<
  'WebhookEndpointEnabled',
  { endpointId: number; at: string }
>;
export type WebhookEndpointDeleted = DomainEvent<
  'WebhookEndpointDeleted',
  { endpointId: number; at: string }
>;

export type WebhookEvent =
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookSecretRotated
  | WebhookEndpointDisabled
  | WebhookEndpointEnabled
  | WebhookEndpointDeleted;
