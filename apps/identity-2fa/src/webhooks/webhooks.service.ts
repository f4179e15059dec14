import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime } from '@rigmarket/event-sourcing';
import { QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import {
  WEBHOOK_ENDPOINTS_TABLE,
  type WebhookEndpointView,
  findWebhookEndpoint,
  listWebhookEndpoints,
} from '../read-models/webhook-endpoints/queries';
import { SCHEMA } from '../schema';
import type { SecretBox } from '../tfa/tfa.crypto';
import { TFA_SECRET_BOX } from '../tfa/tfa.io';
import {
  type WebhookDeliveryDetail,
  type WebhookDeliveryView,
  findWebhookDelivery,
  listWebhookDeliveries,
  requeueWebhookDelivery,
} from './webhook-deliveries';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WEBHOOK_EVENT_TYPE_NAMES, isWebhookEventType } from './webhook-event-types';
import { newWebhookSecret } from './webhook-sender';
import { WEBHOOK_SETTINGS, type WebhookSettings } from './webhook-settings';
import { parseWebhookUrl } from './webhook-target';
import { type WebhookCommand, webhookDecider, webhookStreamId } from './webhook.decider';

export const MAX_WEBHOOK_DESCRIPTION = 200;

/** What a create or update request may carry (unchecked: this service checks it). */
export interface WebhookEndpointInput {
  url?: unknown;
  event_types?: unknown;
  description?: unknown;
  enabled?: unknown;
}

const invalid = (msg: string) => new DomainError('invalid_webhook', msg);

/** A non-empty list of catalog names, each once, in the catalog's order. */
export function parseEventTypes(raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 50)
    throw invalid(`event_types must be a non-empty list of: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}`);
  for (const name of raw)
    if (!isWebhookEventType(name))
      throw invalid(
        `${typeof name === 'string' ? `"${name.slice(0, 60)}"` : 'an entry'} is not a webhook event type (${WEBHOOK_EVENT_TYPE_NAMES.join(', ')})`,
      );
  return WEBHOOK_EVENT_TYPE_NAMES.filter((name) => (raw as unknown[]).includes(name));
}

function parseDescription(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || raw.length > MAX_WEBHOOK_DESCRIPTION)
    throw invalid(`description must be a string of at most ${MAX_WEBHOOK_DESCRIPTION} characters`);
  return raw;
}

/**
 * The webhooks API's application service: endpoints are decided on their `webhook-N` stream (the secret is
 * generated and sealed here, shown once), deliveries are read from and requeued in the worker's tables.
 */
@Injectable()
export class WebhooksService {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(WEBHOOK_SETTINGS) private readonly settings: WebhookSettings,
    @Inject(TFA_SECRET_BOX) private readonly box: SecretBox,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  list(userId: number): Promise<WebhookEndpointView[]> {
    return listWebhookEndpoints(this.runtime.db, userId);
  }

  async get(userId: number, endpointId: number): Promise<WebhookEndpointView> {
    const endpoint = await findWebhookEndpoint(this.runtime.db, userId, endpointId);
    if (!endpoint) throw new DomainError('webhook_endpoint_not_found', 'No such webhook endpoint');
    return endpoint;
  }

  async create(
    userId: number,
    input: WebhookEndpointInput,
    metadata: EventMetadata,
  ): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
    const url = parseWebhookUrl(input.url, this.settings.allowPrivateTargets);
    const eventTypes = parseEventTypes(input.event_types);
    const description = parseDescription(input.description);
    await enforceQuota(
      this.runtime.db,
      QUOTAS.webhooks,
      `SELECT count(*) AS n FROM ${WEBHOOK_ENDPOINTS_TABLE} WHERE user_id = $1 AND deleted_at IS NULL`,
      [userId],
    );
    const endpointId = await this.runtime.nextId('webhook_endpoint_ids');
    const secret = newWebhookSecret();
    await this.decide(
      endpointId,
      {
        type: 'CreateWebhookEndpoint',
        endpointId,
        userId,
        url,
        eventTypes,
        description,
        sealedSecret: this.box.seal(secret),
      },
      metadata,
    );
    return { endpoint: await this.get(userId, endpointId), secret };
  }

  async update(
    userId: number,
    endpointId: number,
    input: WebhookEndpointInput,
    metadata: EventMetadata,
  ): Promise<WebhookEndpointView> {
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean')
      throw invalid('enabled must be true or false');
    const command: CommandBody<WebhookCommand> = {
      type: 'UpdateWebhookEndpoint',
      requesterUserId: userId,
      ...(input.url !== undefined
        ? { url: parseWebhookUrl(input.url, this.settings.allowPrivateTargets) }
        : {}),
      ...(input.event_types !== undefined ? { eventTypes: parseEventTypes(input.event_types) } : {}),
      ...(input.description !== undefined ? { description: parseDescription(input.description) } : {}),
      ...(typeof input.enabled === 'boolean' ? { enabled: input.enabled } : {}),
    };
    await this.decide(endpointId, command, metadata);
    if (input.enabled === true) {
      // Enabled again: its run of failures starts over, and what waited goes out now.
      await this.runtime.db.execute(
        `UPDATE ${SCHEMA}.webhook_endpoint_health SET consecutive_failures = 0 WHERE endpoint_id = $1`,
        [endpointId],
      );
      this.dispatcher.wake();
    }
    return this.get(userId, endpointId);
  }

  async rotateSecret(userId: number, endpointId: number, metadata: EventMetadata): Promise<string> {
    const secret = newWebhookSecret();
    await this.decide(
      endpointId,
      { type: 'RotateWebhookSecret', requesterUserId: userId, sealedSecret: this.box.seal(secret) },
      metadata,
    );
    return secret;
  }

  async remove(userId: number, endpointId: number, metadata: EventMetadata): Promise<void> {
    await this.decide(endpointId, { type: 'DeleteWebhookEndpoint', requesterUserId: userId }, metadata);
  }

  async deliveries(
    userId: number,
    endpointId: number,
    limit: number,
    before?: number,
  ): Promise<WebhookDeliveryView[]> {
    await this.get(userId, endpointId);
    return listWebhookDeliveries(this.runtime.db, endpointId, limit, before);
  }

  async delivery(userId: number, endpointId: number, deliveryId: number): Promise<WebhookDeliveryDetail> {
    await this.get(userId, endpointId);
    const found = await findWebhookDelivery(this.runtime.db, endpointId, deliveryId);
    if (!found) throw new DomainError('webhook_delivery_not_found', 'No such webhook delivery');
    return found;
  }

  /** Sends a logged delivery again (the same webhook-id, so receivers can tell it is a repeat). */
  async redeliver(userId: number, endpointId: number, deliveryId: number): Promise<WebhookDeliveryDetail> {
    const endpoint = await this.get(userId, endpointId);
    if (!endpoint.enabled)
      throw new DomainError('webhook_endpoint_disabled', 'The webhook endpoint is disabled; enable it first');
    if (!(await requeueWebhookDelivery(this.runtime.db, endpointId, deliveryId)))
      throw new DomainError('webhook_delivery_not_found', 'No such webhook delivery');
    this.dispatcher.wake();
    return this.delivery(userId, endpointId, deliveryId);
  }

  private async decide(
    endpointId: number,
    command: CommandBody<WebhookCommand>,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.runtime.runner.run(webhookStreamId(endpointId), webhookDecider, command, metadata);
  }
}
