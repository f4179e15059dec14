import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Put,
  Query as QueryParam,
} from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import {
  Admits,
  Authenticated,
  type Call,
  type Caller,
  CallOf,
  RequirePermission,
  toErrorResponse,
} from '@rigmarket/http-kit';
import { parseCreateRequest } from './create-instance/create-request';
import { INSTANCE_KEY_FORBIDDEN } from './instance-key.strategy';
import {
  BulkCreateInstancesDto,
  ChangeBidDto,
  CreateInstanceDto,
  DestroyInstancesDto,
  LaunchInstanceDto,
  UpdateInstanceDto,
} from './instances.dto';
import { LaunchInstanceCommand, parseLaunchQuery } from './launch';
import { ChangeBidCommand } from './change-bid/change-bid.command';
import { ChangeInstanceCommand, type InstanceChanges } from './change-instance/change-instance.command';
import { CreateInstanceCommand } from './create-instance/create-instance.command';
import { DestroyInstanceCommand } from './destroy-instance/destroy-instance.command';
import { GetInstanceQuery } from './queries/get-instance.query';
import { InstanceFiltersQuery } from './queries/instance-filters.query';
import { ListAllInstancesQuery } from './queries/list-all-instances.query';
import { ListInstancesQuery } from './queries/list-instances.query';
import { RestartInstanceCommand } from './restart-instance/restart-instance.command';

function positiveId(raw: unknown, what: string): number {
  const id = Number(raw);
  if (raw === '' || raw === null || !Number.isInteger(id) || id < 1)
    throw ApiError.badRequest(`${what} must be a positive integer id`, { error: 'invalid_id' });
  return id;
}

function idList(raw: unknown[] | undefined, name: string): number[] {
  if (!raw || raw.length === 0) throw ApiError.badRequest(`${name} must be a non-empty list of instance ids`);
  return raw.map((v) => positiveId(v, name));
}

/** An instance key opens one instance only. */
function checkInstanceKey(caller: Caller, instanceId: number): void {
  if (caller.instanceId !== undefined && caller.instanceId !== instanceId)
    throw ApiError.forbidden(INSTANCE_KEY_FORBIDDEN);
}

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

@Controller('api/v0/instances')
@Authenticated()
export class InstancesV0Controller {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Older clients: `?owner=me`; every row is the caller's own anyway. */
  @Get()
  @RequirePermission('instance_read')
  async list(@CallOf() { caller: principal }: Call) {
    const instances = await this.queries.execute(new ListAllInstancesQuery(principal.userId));
    return { success: true, instances_found: instances.length, instances };
  }

  /** `vastai show instances` (table mode) asks first; failures are ignored by the CLI. */
  @Get('filters')
  @RequirePermission('instance_read')
  async filters(@CallOf() { caller: principal }: Call) {
    return { success: true, filters: await this.queries.execute(new InstanceFiltersQuery(principal.userId)) };
  }

  @Get(':id')
  @RequirePermission('instance_read')
  async one(@Param('id') id: string, @CallOf() { caller: principal }: Call) {
    return {
      instances: await this.queries.execute(
        new GetInstanceQuery(principal.userId, positiveId(id, 'instance id')),
      ),
    };
  }

  @Put()
  @RequirePermission('instance_write')
  async bulkUpdate(@Body() body: UpdateInstanceDto, @CallOf() { caller: principal, metadata }: Call) {
    const ids = idList(body.ids, 'ids');
    const results = await this.each(ids, (id) =>
      this.commands.execute(new ChangeInstanceCommand(principal.userId, id, changesOf(body), metadata)),
    );
    return { success: results.every((r) => r.success), results };
  }

  @Put('bid_price/:id')
  @RequirePermission('instance_write')
  async changeBid(
    @Param('id') idRaw: string,
    @Body() body: ChangeBidDto,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    const price = Number(body.price);
    if (
      body.price === undefined ||
      body.price === null ||
      body.price === '' ||
      !Number.isFinite(price) ||
      price <= 0
    )
      throw ApiError.badRequest('price must be a positive bid in $/hour');
    await this.commands.execute(new ChangeBidCommand(principal.userId, id, price, metadata));
    return { success: true, msg: `Bid of instance ${id} is now ${price} $/hour` };
  }

  @Put('reboot/:id')
  @RequirePermission('instance_write')
  async reboot(@Param('id') idRaw: string, @CallOf() { caller: principal, metadata }: Call) {
    const id = positiveId(idRaw, 'instance id');
    await this.commands.execute(new RestartInstanceCommand(principal.userId, id, false, metadata));
    return { success: true, msg: `Instance ${id} is rebooting` };
  }

  @Put('recycle/:id')
  @RequirePermission('instance_write')
  async recycle(@Param('id') idRaw: string, @CallOf() { caller: principal, metadata }: Call) {
    const id = positiveId(idRaw, 'instance id');
    await this.commands.execute(new RestartInstanceCommand(principal.userId, id, true, metadata));
    return { success: true, msg: `Instance ${id} is being recycled` };
  }

  @Put(':id')
  @Admits('instance_key')
  @RequirePermission('instance_write')
  async update(
    @Param('id') idRaw: string,
    @Body() body: UpdateInstanceDto,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    checkInstanceKey(principal, id);
    if (principal.instanceId !== undefined && body.label !== undefined)
      throw ApiError.forbidden(INSTANCE_KEY_FORBIDDEN);
    const changes = changesOf(body);
    if (changes.state === undefined && changes.label === undefined)
      throw ApiError.badRequest('Give state (running or stopped) and/or label');
    await this.commands.execute(new ChangeInstanceCommand(principal.userId, id, changes, metadata));
    return {
      success: true,
      msg: changes.state ? `Instance ${id} is going to ${changes.state}` : `Instance ${id} labelled`,
    };
  }

  @Delete()
  @RequirePermission('instance_write')
  async bulkDestroy(@Body() body: DestroyInstancesDto, @CallOf() { caller: principal, metadata }: Call) {
    const ids = idList(body.instance_ids, 'instance_ids');
    const results = await this.each(ids, (id) =>
      this.commands.execute(new DestroyInstanceCommand(principal.userId, id, metadata)),
    );
    return { success: results.every((r) => r.success), results };
  }

  @Delete(':id')
  @Admits('instance_key')
  @RequirePermission('instance_write')
  async destroy(@Param('id') idRaw: string, @CallOf() { caller: principal, metadata }: Call) {
    const id = positiveId(idRaw, 'instance id');
    checkInstanceKey(principal, id);
    await this.commands.execute(new DestroyInstanceCommand(principal.userId, id, metadata));
    return { success: true, msg: `Instance ${id} destroyed` };
  }

  private async each(ids: number[], run: (id: number) => Promise<unknown>) {
    const results: { id: number; success: boolean; error?: string; msg?: string }[] = [];
    for (const id of ids) {
      try {
        await run(id);
        results.push({ id, success: true });
      } catch (error) {
        const refusal = toErrorResponse(error);
        if (refusal.status >= 500) throw error;
        results.push({ id, success: false, error: refusal.body.error, msg: refusal.body.msg });
      }
    }
    return results;
  }
}

function changesOf(body: UpdateInstanceDto): InstanceChanges {
  return {
    ...(body.state !== undefined ? { state: body.state } : {}),
    ...(body.label !== undefined ? { label: body.label } : {}),
  };
}

/** What current clients list with (docs/client-compat.md 2.3): keyset-style pages of at most 25. */
@Controller('api/v1/instances')
@Authenticated()
export class InstancesV1Controller {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @RequirePermission('instance_read')
  async list(@QueryParam() query: Record<string, unknown>, @CallOf() { caller: principal }: Call) {
    const page = await this.queries.execute(new ListInstancesQuery(principal.userId, query));
    return { success: true, ...page, instances_found: page.instances.length };
  }
}

/**
 * `vastai launch instance -g GPU -n N -i IMAGE [-r REGION]`: rents the cheapest matching offer that can be
 * had now (launch.ts). Answers like a create, plus the offer taken as ask_id.
 */
@Controller('api/v0/launch_instance')
@Authenticated()
export class LaunchController {
  constructor(private readonly commands: CommandBus) {}

  @Put()
  @RequirePermission('instance_write')
  async launch(@Body() body: LaunchInstanceDto, @CallOf() { caller: principal, metadata }: Call) {
    const { q, ...fields } = body;
    const criteria = parseLaunchQuery(q);
    const request = parseCreateRequest({ ...fields });
    const created = await this.commands.execute(
      new LaunchInstanceCommand(principal.userId, criteria, request, metadata),
    );
    return {
      success: true,
      new_contract: created.instanceId,
      instance_api_key: created.instanceApiKey,
      ask_id: created.offerId,
    };
  }
}
