import { Body, Controller, Delete, Get, Param, ParseIntPipe, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';
import { ONSTART_MAX } from '../instances/create-instance/create-request';
import type { DefaultJob } from './default-job.decider';
import {
  CleanupMachineCommand,
  MachineReportsQuery,
  RemoveDefaultJobCommand,
  SetDefaultJobCommand,
} from './host-machines.handlers';

const machineIdPipe = new ParseIntPipe({
  exceptionFactory: () => ApiError.badRequest('The machine id must be an integer'),
});

/** The most arguments of a default job, and the longest image name (docs/api.md, "Limits"). */
const DEFAULT_JOB_LIMITS = { args: 100, imageLength: 512 } as const;

function price(body: Record<string, unknown>, key: string): number | null {
  const raw = body[key];
  if (raw === undefined || raw === null) return null;
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1_000_000)
    throw ApiError.badRequest(`${key} must be a number >= 0`);
  return value;
}

/** `vastai set defjob`'s body: {machine, price_gpu, price_inetu, price_inetd, image, args}. */
function parseDefaultJob(body: unknown): { machineId: number; job: DefaultJob } {
  if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
  const machineId = typeof body.machine === 'string' ? Number(body.machine) : body.machine;
  if (typeof machineId !== 'number' || !Number.isInteger(machineId))
    throw ApiError.badRequest('machine (the machine id) is required');
  const image = typeof body.image === 'string' ? body.image.trim() : '';
  if (image === '' || image.length > DEFAULT_JOB_LIMITS.imageLength)
    throw ApiError.badRequest('image (the docker image of the default job) is required');
  let args: string[] | null = null;
  if (body.args !== undefined && body.args !== null) {
    if (
      !Array.isArray(body.args) ||
      body.args.length > DEFAULT_JOB_LIMITS.args ||
      !body.args.every((a) => typeof a === 'string' && a.length <= ONSTART_MAX)
    )
      throw ApiError.badRequest(`args must be a list of at most ${DEFAULT_JOB_LIMITS.args} strings`);
    args = body.args as string[];
  }
  return {
    machineId,
    job: {
      image,
      args: args && args.length > 0 ? args : null,
      priceGpu: price(body, 'price_gpu'),
      priceInetUp: price(body, 'price_inetu'),
      priceInetDown: price(body, 'price_inetd'),
    },
  };
}

/**
 * A host's operations on its machine's instances (docs/instances.md, "Host machine operations"): the default
 * job, cleanup of ended contracts, reports. The machine's owner only; to anyone else the machine is missing (404).
 */
@Controller('api/v0/machines')
@Authenticated()
export class HostMachinesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** `vastai set defjob ID --image IMAGE [--args ...]`: the host's own job on the machine's idle GPUs. */
  @Put('create_bids')
  @RequirePermission('machine_write')
  @ApiContract({ body: BODIES.defaultJob, ok: ANSWERS.defaultJobSet, errors: { 404: ['no_such_machine'] } })
  async setDefaultJob(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const { machineId, job } = parseDefaultJob(body);
    const { instanceId } = await this.commands.execute(
      new SetDefaultJobCommand(caller.userId, machineId, job, metadata),
    );
    return {
      success: true,
      instance_id: instanceId,
      msg:
        instanceId === null
          ? `Default job set on machine ${machineId}; no GPU is idle now`
          : `Default job set on machine ${machineId}: instance ${instanceId} runs on its idle GPUs until a rental takes them`,
    };
  }

  /** `vastai remove defjob ID`. */
  @Delete(':id/defjob')
  @RequirePermission('machine_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 404: ['no_such_machine'] } })
  async removeDefaultJob(@Param('id', machineIdPipe) id: number, @CallOf() { caller, metadata }: Call) {
    await this.commands.execute(new RemoveDefaultJobCommand(caller.userId, id, metadata));
    return { success: true, msg: `Default job of machine ${id} removed` };
  }

  /** `vastai cleanup machine ID`: instances whose contract ended and which no longer run are destroyed. */
  @Put(':id/cleanup')
  @RequirePermission('machine_write')
  @ApiContract({ ok: ANSWERS.cleanedUp, errors: { 404: ['no_such_machine'] } })
  async cleanup(@Param('id', machineIdPipe) id: number, @CallOf() { caller, metadata }: Call) {
    const { instanceIds, diskGb } = await this.commands.execute(
      new CleanupMachineCommand(caller.userId, id, metadata),
    );
    return {
      success: true,
      msg: `Removed ${instanceIds.length} expired instance(s) from machine ${id}, freeing ${diskGb} GB`,
      instances_removed: instanceIds,
      disk_freed_gb: diskGb,
    };
  }

  /** `vastai reports ID`: what went wrong with instances on the machine, newest first. */
  @Get(':id/reports')
  @RequirePermission('machine_read')
  @ApiContract({ ok: ANSWERS.reports, errors: { 404: ['no_such_machine'] } })
  async reports(@Param('id', machineIdPipe) id: number, @CallOf() { caller }: Call) {
    return { success: true, reports: await this.queries.execute(new MachineReportsQuery(caller.userId, id)) };
  }
}
