import { Body, Controller, Delete, Get, Param, Put, Query as QueryParam, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import type { Response } from 'express';
import {
  AS_OF_ANSWER,
  AS_OF_QUERY,
  ApiContract,
  Admits,
  asOfAnswer,
  asOfMillis,
  Authenticated,
  type Call,
  CallOf,
  RequirePermission,
  toErrorResponse,
} from '@rigmarket/http-kit';
import { ChangeBidCommand } from './change-bid/change-bid.command';
import { ChangeInstanceCommand, type InstanceChanges } from './change-instance/change-instance.command';
import { DestroyInstanceCommand } from './destroy-instance/destroy-instance.command';
import { checkInstanceKey, idList, positiveId } from './http-params';
import { INSTANCE_KEY_FORBIDDEN } from './instance-key.strategy';
import { ChangeBidDto, DestroyInstancesDto, UpdateInstanceDto, UpdateTemplateDto } from './instances.dto';
import { UpdateInstanceCommand } from './update-instance/update-instance.handler';
import { parseUpdateRequest } from './update-instance/update-request';
import { GetInstanceQuery } from './queries/get-instance.query';
import { InstanceHistoryQuery } from './queries/instance-history.query';
import { InstanceFiltersQuery } from './queries/instance-filters.query';
import { LIST_INSTANCES_PERMISSION } from './queries/cached-poll.middleware';
import { ListAllInstancesQuery } from './queries/list-all-instances.query';
import { ListInstancesQuery } from './queries/list-instances.query';
import { sendPollAnswer } from './queries/poll-answer-cache';
import { RestartInstanceCommand } from './restart-instance/restart-instance.command';
import { ANSWERS, BODIES, INSTANCE_ERRORS } from '../instance-lifecycle.openapi';

/** The instance routes of the use cases after creation (change, bid, restart, destroy) and the queries. */
@Controller('api/v0/instances')
@Authenticated()
export class InstancesV0Controller {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Older clients: `?owner=me`; every row is the caller's own anyway. */
  @Get()
  @RequirePermission(LIST_INSTANCES_PERMISSION)
  @ApiContract({ ok: ANSWERS.list })
  async list(@CallOf() { caller: principal }: Call, @Res() response: Response): Promise<void> {
    // The answer's bytes and ETag, often from the poll cache (list-all-instances.query.ts), sent as they are.
    // A cached answer for a cached key never gets here: cached-poll.middleware.ts sends it first.
    sendPollAnswer(response, await this.queries.execute(new ListAllInstancesQuery(principal.userId)));
  }

  /** `vastai show instances` (table mode) asks first; failures are ignored by the CLI. */
  @Get('filters')
  @RequirePermission('instance_read')
  @ApiContract({ ok: ANSWERS.filters })
  async filters(@CallOf() { caller: principal }: Call) {
    return { success: true, filters: await this.queries.execute(new InstanceFiltersQuery(principal.userId)) };
  }

  @Get(':id')
  @RequirePermission('instance_read')
  @ApiContract({
    ok: { anyOf: [ANSWERS.one, AS_OF_ANSWER] },
    query: AS_OF_QUERY,
    errors: { ...INSTANCE_ERRORS, 400: [...INSTANCE_ERRORS[400], 'invalid_args'] },
  })
  async one(
    @Param('id') id: string,
    @CallOf() { caller: principal }: Call,
    @QueryParam('as_of') asOf?: string,
  ) {
    const asOfMs = asOfMillis(asOf);
    if (asOfMs !== undefined) {
      // The instance as its events had made it then (docs/audit.md, History and as-of).
      const found = await this.queries.execute(
        new InstanceHistoryQuery(principal.userId, positiveId(id, 'instance id'), asOfMs),
      );
      if (!found || found.events.length === 0)
        throw ApiError.notFound(`No instance ${id} of yours at that time`, 'no_such_instance');
      return asOfAnswer(asOfMs, found.events, found.state);
    }
    return {
      instances: await this.queries.execute(
        new GetInstanceQuery(principal.userId, positiveId(id, 'instance id')),
      ),
    };
  }

  @Put()
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.bulkUpdate, ok: ANSWERS.results })
  async bulkUpdate(@Body() body: UpdateInstanceDto, @CallOf() { caller: principal, metadata }: Call) {
    const ids = idList(body.ids, 'ids');
    const results = await this.each(ids, (id) =>
      this.commands.execute(new ChangeInstanceCommand(principal.userId, id, changesOf(body), metadata)),
    );
    return { success: results.every((r) => r.success), results };
  }

  @Put('bid_price/:id')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.bid,
    ok: ANSWERS.msg,
    errors: { ...INSTANCE_ERRORS, 400: [...INSTANCE_ERRORS[400], 'not_a_bid'] },
  })
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
  @ApiContract({ ok: ANSWERS.msg, errors: INSTANCE_ERRORS })
  async reboot(@Param('id') idRaw: string, @CallOf() { caller: principal, metadata }: Call) {
    const id = positiveId(idRaw, 'instance id');
    await this.commands.execute(new RestartInstanceCommand(principal.userId, id, false, metadata));
    return { success: true, msg: `Instance ${id} is rebooting` };
  }

  @Put('recycle/:id')
  @RequirePermission('instance_write')
  @ApiContract({ ok: ANSWERS.msg, errors: INSTANCE_ERRORS })
  async recycle(@Param('id') idRaw: string, @CallOf() { caller: principal, metadata }: Call) {
    const id = positiveId(idRaw, 'instance id');
    await this.commands.execute(new RestartInstanceCommand(principal.userId, id, true, metadata));
    return { success: true, msg: `Instance ${id} is being recycled` };
  }

  /** `vastai update instance ID [--image --env --onstart --args --template_id --template_hash_id]`. */
  @Put('update_template/:id')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.updateTemplate,
    ok: ANSWERS.msg,
    errors: {
      ...INSTANCE_ERRORS,
      400: [...INSTANCE_ERRORS[400], 'bad_request', 'nothing_to_update'],
      404: ['no_such_instance', 'no_such_template'],
    },
  })
  async updateTemplate(
    @Param('id') idRaw: string,
    @Body() body: UpdateTemplateDto,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    const request = parseUpdateRequest(body as Record<string, unknown>);
    await this.commands.execute(new UpdateInstanceCommand(principal.userId, id, request, metadata));
    return { success: true, msg: `Instance ${id} is being recreated with its new settings` };
  }

  @Put(':id')
  @Admits('instance_key')
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.update, ok: ANSWERS.msg, errors: INSTANCE_ERRORS })
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
  @ApiContract({ body: BODIES.bulkDestroy, ok: ANSWERS.results })
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
  @ApiContract({ ok: ANSWERS.msg, errors: INSTANCE_ERRORS })
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
  @ApiContract({ ok: ANSWERS.page })
  async list(@QueryParam() query: Record<string, unknown>, @CallOf() { caller: principal }: Call) {
    const page = await this.queries.execute(new ListInstancesQuery(principal.userId, query));
    return { success: true, ...page, instances_found: page.instances.length };
  }
}
