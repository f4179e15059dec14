import { Body, Controller, Headers, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  type Caller,
  CallOf,
  RequirePermission,
  toErrorResponse,
} from '@rigmarket/http-kit';
import { positiveId } from '../http-params';
import { BulkCreateInstancesDto, CreateInstanceDto } from '../instances.dto';
import { CreateInstanceCommand } from './create-instance.command';
import { parseCreateRequest } from './create-request';
import { ANSWERS, BODIES, RENT_ERRORS } from '../../instance-lifecycle.openapi';

/** Creating an instance: PUT (and POST, as one description names it) /api/v0/asks/{offer_id}/. */
@Controller('api/v0/asks')
@Authenticated()
export class AsksController {
  constructor(private readonly commands: CommandBus) {}

  /**
   * `vastai create instances ID...`: one instance per offer id, each on its own (one offer taken does not
   * stop the others). success is true when every offer was rented; `results` says what became of each.
   */
  @Post('bulk')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.bulkCreate, ok: ANSWERS.bulkCreated })
  async bulk(@Body() body: BulkCreateInstancesDto, @CallOf() { caller: principal, metadata }: Call) {
    const { ids, ...fields } = body;
    if (!Array.isArray(ids) || ids.length === 0)
      throw ApiError.badRequest('ids must be a non-empty list of offer ids');
    if (ids.length > 64)
      throw ApiError.badRequest('at most 64 offer ids per request (the CLI sends chunks of 64)');
    const offerIds = ids.map((v) => positiveId(v, 'ids'));
    const request = parseCreateRequest({ ...fields });
    const results = [];
    for (const offerId of offerIds) {
      try {
        const created = await this.commands.execute(
          new CreateInstanceCommand(principal.userId, offerId, request, metadata),
        );
        results.push({
          ask_id: offerId,
          success: true,
          new_contract: created.instanceId,
          instance_api_key: created.instanceApiKey,
        });
      } catch (error) {
        const refusal = toErrorResponse(error);
        if (refusal.status >= 500) throw error;
        results.push({ ask_id: offerId, success: false, error: refusal.body.error, msg: refusal.body.msg });
      }
    }
    const created = results.filter((r) => r.success);
    return {
      success: created.length === results.length,
      new_contracts: created.map((r) => r.new_contract),
      results,
    };
  }

  @Put(':offerId')
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.create, ok: ANSWERS.created, errors: RENT_ERRORS })
  put(
    @Param('offerId') offerId: string,
    @Body() body: CreateInstanceDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    return this.create(offerId, body, principal, metadata, idempotencyKey);
  }

  @Post(':offerId')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.create, ok: ANSWERS.created, errors: RENT_ERRORS })
  post(
    @Param('offerId') offerId: string,
    @Body() body: CreateInstanceDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    return this.create(offerId, body, principal, metadata, idempotencyKey);
  }

  private async create(
    offerIdRaw: string,
    body: CreateInstanceDto,
    principal: Caller,
    metadata: EventMetadata,
    idempotencyKey: string | undefined,
  ) {
    const offerId = positiveId(offerIdRaw, 'offer_id');
    const request = parseCreateRequest({ ...body });
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 255))
      throw ApiError.badRequest('Idempotency-Key must be 1 to 255 characters');
    const created = await this.commands.execute(
      new CreateInstanceCommand(principal.userId, offerId, request, metadata, idempotencyKey ?? null),
    );
    return { success: true, new_contract: created.instanceId, instance_api_key: created.instanceApiKey };
  }
}
