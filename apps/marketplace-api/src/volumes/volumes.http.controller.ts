import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query as QueryParam } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError, MONEY_LIMITS } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import {
  CloneVolumeCommand,
  CreateVolumeCommand,
  DeleteVolumeCommand,
  ListVolumeSpaceCommand,
  ListVolumesQuery,
  SearchVolumeOffersQuery,
  UnlistVolumeSpaceCommand,
  parseVolumeSearch,
} from './volumes.handlers';
import { ANSWERS, BODIES, QUERIES } from '../marketplace.openapi';

function requiredNumber(name: string, raw: unknown): number {
  const value =
    typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw ApiError.badRequest(`${name} is required and must be a number`);
  return value;
}

/** A volume or volume offer id in a body: a whole number within PostgreSQL's INTEGER (ids are sequences). */
function requiredId(name: string, raw: unknown): number {
  const value = requiredNumber(name, raw);
  if (!Number.isInteger(value) || value < 1 || value > 2_147_483_647)
    throw ApiError.badRequest(`${name} must be a volume id (a whole number from 1 to 2147483647)`);
  return value;
}

/** Volumes (docs/client-compat.md 2.15). */
@Controller('api/v0/volumes')
@Authenticated()
export class VolumesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Host: `list volume 42 -p 0.2 -s 100 -e ...` ({size, machine (id or list), price_disk, end_date}). */
  @Post()
  @HttpCode(200)
  @RequirePermission('machine_write')
  @ApiContract({
    body: BODIES.listVolume,
    ok: ANSWERS.msg,
    errors: { 400: ['invalid_size', 'insufficient_space'], 404: ['no_such_machine'] },
  })
  async list(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const machines = (Array.isArray(body.machine) ? body.machine : [body.machine]).map((m) =>
      requiredNumber('machine', m),
    );
    const endDate =
      body.end_date === undefined || body.end_date === null
        ? null
        : requiredNumber('end_date', body.end_date);
    await this.commands.execute(
      new ListVolumeSpaceCommand(
        principal.userId,
        machines,
        requiredNumber('size', body.size),
        requiredNumber('price_disk', body.price_disk ?? 0),
        endDate,
        metadata,
      ),
    );
    return { success: true, msg: `Volume space listed on machine(s) ${machines.join(', ')}` };
  }

  /** Host: `unlist volume 3` (POST /volumes/unlist, no slash); the CLI reads msg. */
  @Post('unlist')
  @HttpCode(200)
  @RequirePermission('machine_write')
  @ApiContract({ body: BODIES.unlistVolume, ok: ANSWERS.msg, errors: { 404: ['no_such_machine'] } })
  async unlist(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    const id = requiredNumber('id', isJsonObject(body) ? body.id : undefined);
    await this.commands.execute(new UnlistVolumeSpaceCommand(principal.userId, id, metadata));
    return { success: true, msg: `Volume offer ${id} unlisted` };
  }

  /** Any valid key may search volume offers (401 without one). */
  @Post('search')
  @HttpCode(200)
  @ApiContract({ body: BODIES.volumeSearch, ok: ANSWERS.volumeOffers })
  async search(@Body() body: unknown) {
    const source = isJsonObject(body) ? (isJsonObject(body.q) ? { ...body, ...body.q } : body) : {};
    return { offers: await this.queries.execute(new SearchVolumeOffersQuery(parseVolumeSearch(source))) };
  }

  /** Renter: `create volume 222 -s 20 -n myvol` ({size, id, name?}). */
  @Put()
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.createVolume,
    ok: ANSWERS.volumeCreated,
    errors: { 400: ['invalid_size', 'insufficient_space'], 404: ['no_such_machine'], 409: ['volume_exists'] },
  })
  async create(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const name = typeof body.name === 'string' && body.name !== '' ? body.name : null;
    const { volumeId } = await this.commands.execute(
      new CreateVolumeCommand(
        principal.userId,
        requiredNumber('id', body.id),
        requiredNumber('size', body.size),
        name,
        metadata,
      ),
    );
    return { success: true, volume_id: volumeId, msg: `Volume ${volumeId} created` };
  }

  /**
   * Renter: `clone volume SRC OFFER [-s SIZE] [-d]` ({src_id, dst_id, size?, disable_compression?}): a new
   * volume on the volume offer dst_id with a copy of the caller's volume src_id, made by the host agents
   * (`show volumes` says cloning, then online, or failed with the reason). The tar is not compressed, so
   * disable_compression changes nothing.
   */
  @Post('copy')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.cloneVolume,
    ok: ANSWERS.volumeCreated,
    errors: {
      400: ['invalid_size', 'insufficient_space'],
      404: ['no_such_volume', 'no_such_offer'],
      409: ['volume_exists'],
    },
  })
  async clone(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const srcId = requiredId('src_id', body.src_id);
    const dstId = requiredId('dst_id', body.dst_id);
    const size = body.size === undefined || body.size === null ? null : requiredNumber('size', body.size);
    if (size !== null && (size < 1 || size > MONEY_LIMITS.diskGb))
      throw ApiError.badRequest(
        `size must be from 1 to ${MONEY_LIMITS.diskGb.toLocaleString('en-US')} GB (got ${size})`,
        { field: 'size' },
      );
    const { volumeId } = await this.commands.execute(
      new CloneVolumeCommand(principal.userId, srcId, dstId, size, metadata),
    );
    return { success: true, volume_id: volumeId, msg: `Volume ${volumeId} created: cloning volume ${srcId}` };
  }

  @Get()
  @RequirePermission('instance_read')
  @ApiContract({ query: QUERIES.volumes, ok: ANSWERS.volumes })
  async show(@QueryParam('type') type: string | undefined, @CallOf() { caller: principal }: Call) {
    return {
      success: true,
      volumes: await this.queries.execute(new ListVolumesQuery(principal.userId, type ?? 'all_volume')),
    };
  }

  /** `delete volume 3`: the id is in the query. */
  @Delete()
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.deleteVolume,
    query: QUERIES.volumeDelete,
    ok: ANSWERS.msg,
    errors: { 404: ['no_such_volume'], 409: ['volume_mismatch'] },
  })
  async remove(
    @QueryParam('id') rawId: unknown,
    @Body() body: unknown,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const id = requiredNumber('id', rawId ?? (isJsonObject(body) ? body.id : undefined));
    await this.commands.execute(new DeleteVolumeCommand(principal.userId, id, metadata));
    return { success: true, msg: `Volume ${id} deleted` };
  }
}
