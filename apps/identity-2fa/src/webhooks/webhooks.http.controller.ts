import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsOptional } from 'class-validator';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENT_TYPE_NAMES } from './webhook-event-types';
import { WEBHOOK_ANSWERS, WEBHOOK_BODIES } from './webhooks.openapi';
import { WebhooksService } from './webhooks.service';

export class WebhookEndpointRequest {
  /** http(s) URL, at most 2048 characters (checked by parseWebhookUrl). */
  @IsOptional()
  url?: unknown;

  /** Names from GET /api/v0/webhooks/event_types/ (checked by parseEventTypes). */
  @IsOptional()
  event_types?: unknown;

  @IsOptional()
  description?: unknown;

  /** Update only: false stops deliveries, true resumes them (after an automatic disable too). */
  @IsOptional()
  enabled?: unknown;
}

const MAX_ID = 2_147_483_647;

function idParam(name: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1 || value > MAX_ID)
    throw ApiError.badRequest(`The ${name} must be a positive integer`);
  return value;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

function limitParam(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_LIMIT;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT)
    throw new ApiError(400, 'invalid_args', `limit must be an integer from 1 to ${MAX_LIMIT}`);
  return value;
}

const ENDPOINT_ERRORS = { 404: ['webhook_endpoint_not_found'] } as const;

/**
 * The caller's webhook endpoints (docs/api.md, Webhooks): register a URL for some event types and get its
 * signing secret once; list, change, disable or delete it; read its delivery log and send a delivery again.
 * Another account's endpoint or delivery answers 404 like one that does not exist.
 */
@Controller('api/v0/webhooks')
@Authenticated()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get('event_types')
  @RequirePermission('user_read')
  @ApiContract({ ok: WEBHOOK_ANSWERS.eventTypes })
  eventTypes() {
    return {
      success: true,
      event_types: WEBHOOK_EVENT_TYPE_NAMES.map((name) => ({ name, description: WEBHOOK_EVENT_TYPES[name] })),
    };
  }

  @Get()
  @RequirePermission('user_read')
  @ApiContract({ ok: WEBHOOK_ANSWERS.endpoints })
  async list(@CallOf() { caller }: Call) {
    return { success: true, endpoints: await this.webhooks.list(caller.userId) };
  }

  @Post()
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({
    body: WEBHOOK_BODIES.create,
    ok: WEBHOOK_ANSWERS.created,
    errors: { 400: ['invalid_webhook'], 403: ['quota_exceeded'] },
  })
  async create(@Body() body: WebhookEndpointRequest, @CallOf() { caller, metadata }: Call) {
    const { endpoint, secret } = await this.webhooks.create(caller.userId, body, metadata);
    return { success: true, endpoint, secret };
  }

  @Get(':id')
  @RequirePermission('user_read')
  @ApiContract({ ok: WEBHOOK_ANSWERS.endpoint, errors: ENDPOINT_ERRORS })
  async get(@Param('id') id: string, @CallOf() { caller }: Call) {
    return { success: true, endpoint: await this.webhooks.get(caller.userId, idParam('endpoint id', id)) };
  }

  @Put(':id')
  @RequirePermission('user_write')
  @ApiContract({
    body: WEBHOOK_BODIES.update,
    ok: WEBHOOK_ANSWERS.endpoint,
    errors: { 400: ['invalid_webhook'], ...ENDPOINT_ERRORS },
  })
  async update(
    @Param('id') id: string,
    @Body() body: WebhookEndpointRequest,
    @CallOf() { caller, metadata }: Call,
  ) {
    const endpoint = await this.webhooks.update(caller.userId, idParam('endpoint id', id), body, metadata);
    return { success: true, endpoint };
  }

  @Delete(':id')
  @RequirePermission('user_write')
  @ApiContract({ ok: WEBHOOK_ANSWERS.msg, errors: ENDPOINT_ERRORS })
  async remove(@Param('id') id: string, @CallOf() { caller, metadata }: Call) {
    const endpointId = idParam('endpoint id', id);
    await this.webhooks.remove(caller.userId, endpointId, metadata);
    return { success: true, msg: `Webhook endpoint ${endpointId} deleted` };
  }

  @Post(':id/rotate_secret')
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({ ok: WEBHOOK_ANSWERS.secret, errors: ENDPOINT_ERRORS })
  async rotate(@Param('id') id: string, @CallOf() { caller, metadata }: Call) {
    const secret = await this.webhooks.rotateSecret(caller.userId, idParam('endpoint id', id), metadata);
    return { success: true, secret };
  }

  @Get(':id/deliveries')
  @RequirePermission('user_read')
  @ApiContract({
    ok: WEBHOOK_ANSWERS.deliveries,
    query: {
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      before: { type: 'integer', description: 'Only deliveries with a smaller id (the next page)' },
    },
    errors: { 400: ['invalid_args'], ...ENDPOINT_ERRORS },
  })
  async deliveries(
    @Param('id') id: string,
    @CallOf() { caller }: Call,
    @Query('limit') limitText?: string,
    @Query('before') beforeText?: string,
  ) {
    const before = beforeText ? idParam('before', beforeText) : undefined;
    const deliveries = await this.webhooks.deliveries(
      caller.userId,
      idParam('endpoint id', id),
      limitParam(limitText),
      before,
    );
    return { success: true, deliveries };
  }

  @Get(':id/deliveries/:deliveryId')
  @RequirePermission('user_read')
  @ApiContract({
    ok: WEBHOOK_ANSWERS.delivery,
    errors: { 404: [...ENDPOINT_ERRORS[404], 'webhook_delivery_not_found'] },
  })
  async delivery(@Param('id') id: string, @Param('deliveryId') delivery: string, @CallOf() { caller }: Call) {
    return {
      success: true,
      delivery: await this.webhooks.delivery(
        caller.userId,
        idParam('endpoint id', id),
        idParam('delivery id', delivery),
      ),
    };
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({
    ok: WEBHOOK_ANSWERS.delivery,
    errors: {
      404: [...ENDPOINT_ERRORS[404], 'webhook_delivery_not_found'],
      409: ['webhook_endpoint_disabled'],
    },
  })
  async redeliver(
    @Param('id') id: string,
    @Param('deliveryId') delivery: string,
    @CallOf() { caller }: Call,
  ) {
    return {
      success: true,
      delivery: await this.webhooks.redeliver(
        caller.userId,
        idParam('endpoint id', id),
        idParam('delivery id', delivery),
      ),
    };
  }
}
