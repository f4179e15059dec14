import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiError,
  type MachineAsk,
  type MachineHardware,
  type MachineVerification,
} from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  Public,
  RequirePermission,
} from '@rigmarket/http-kit';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  Min,
} from 'class-validator';
import {
  DefragMachinesQuery,
  DeleteMachineCommand,
  GpuNamesQuery,
  ListMachineCommand,
  ListMachinesQuery,
  RecordHeartbeatCommand,
  RegisterMachineCommand,
  SetMinBidCommand,
  SetVerificationCommand,
  UnlistMachineCommand,
} from './machines.handlers';
import { ANSWERS, BODIES } from '../marketplace.openapi';

/**
 * What a host agent reports when it registers a machine. RAM in MB, disk in GB, bandwidth in Mb/s. Every number
 * has a range that fits its column (docs/api.md "Limits").
 */
export class RegisterMachineRequest {
  @IsString() gpu_name: string;
  @IsInt() @Min(1) @Max(1024) num_gpus: number;
  @IsNumber() @Min(0) @Max(1e9) gpu_ram: number;
  @IsNumber() @Min(0) @Max(1000) cuda_max_good: number;
  @IsString() driver_version: string;
  @IsOptional() @IsNumber() @Min(0) @Max(100_000) compute_cap?: number;
  @IsOptional() @IsString() cpu_name?: string;
  @IsInt() @Min(1) @Max(1_000_000) cpu_cores: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1000) cpu_ghz?: number;
  @IsNumber() @Min(0) @Max(1e12) cpu_ram: number;
  @IsNumber() @Min(0) @Max(1e9) disk_space: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1e9) disk_bw?: number;
  @IsOptional() @IsString() disk_name?: string;
  @IsNumber() @Min(0) @Max(1e9) inet_up: number;
  @IsNumber() @Min(0) @Max(1e9) inet_down: number;
  @IsOptional() @IsInt() @Min(0) @Max(65_535) direct_port_count?: number;
  @IsOptional() @IsString() public_ipaddr?: string;
  @IsOptional() @IsString() geolocation?: string;
  @IsOptional() @IsNumber() @Min(0) @Max(100) pci_gen?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1e9) pcie_bw?: number;
  @IsOptional() @IsString() hostname?: string;
  @IsOptional() @IsIn([0, 1]) hosting_type?: number;
  @IsOptional() @IsBoolean() vms_enabled?: boolean;
}

/** `vastai list machine` (docs/client-compat.md 2.14): every key is sent, unset ones as null. */
export class CreateAsksRequest {
  @IsOptional() machine?: unknown;
  @IsOptional() price_gpu?: unknown;
  @IsOptional() price_disk?: unknown;
  @IsOptional() price_inetu?: unknown;
  @IsOptional() price_inetd?: unknown;
  @IsOptional() price_min_bid?: unknown;
  @IsOptional() min_chunk?: unknown;
  @IsOptional() end_date?: unknown;
  @IsOptional() credit_discount_max?: unknown;
  @IsOptional() duration?: unknown;
  @IsOptional() vol_size?: unknown;
  @IsOptional() vol_price?: unknown;
}

export class MinBidRequest {
  @IsOptional() price?: unknown;
}

/** `vastai defrag machines ID...`: `{"machine_ids": [...]}`. */
export class DefragRequest {
  @IsArray() @ArrayMaxSize(1000) machine_ids: unknown[];
}

export class VerificationRequest {
  @IsIn(['unverified', 'verified', 'deverified']) verification: MachineVerification;
}

function optionalNumber(name: string, raw: unknown): number | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw ApiError.badRequest(`${name} must be a number`);
  return value;
}

/** The fields the request gives; null (the CLI's "left unset") and absent both keep the current value. */
function askFrom(body: CreateAsksRequest): Partial<MachineAsk> {
  const given = (name: string, value: unknown) => optionalNumber(name, value) ?? undefined;
  return {
    priceGpu: given('price_gpu', body.price_gpu),
    priceDisk: given('price_disk', body.price_disk),
    priceInetUp: given('price_inetu', body.price_inetu),
    priceInetDown: given('price_inetd', body.price_inetd),
    minBid: given('price_min_bid', body.price_min_bid),
    minChunk: given('min_chunk', body.min_chunk),
    endDate: given('end_date', body.end_date),
    creditDiscountMax: given('credit_discount_max', body.credit_discount_max),
    duration: body.duration === undefined || body.duration === null ? undefined : String(body.duration),
    volSize: given('vol_size', body.vol_size),
    volPrice: given('vol_price', body.vol_price),
  };
}

const machineIdPipe = new ParseIntPipe({
  exceptionFactory: () => ApiError.badRequest('The machine id must be an integer'),
});

@Controller('api/v0')
@Authenticated()
export class MachinesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** The host agent registers its machine; the caller becomes its owner. */
  @Post('machines')
  @RequirePermission('machine_write')
  @ApiContract({ status: 201, body: BODIES.registerMachine, ok: ANSWERS.machineRegistered })
  async register(@Body() body: RegisterMachineRequest, @CallOf() { caller: principal, metadata }: Call) {
    const hardware: MachineHardware = {
      hostname: body.hostname ?? null,
      gpuName: body.gpu_name.replace(/_/g, ' ').trim(),
      numGpus: body.num_gpus,
      gpuRamMb: body.gpu_ram,
      cudaMaxGood: body.cuda_max_good,
      driverVersion: body.driver_version,
      computeCap: body.compute_cap ?? 0,
      cpuName: body.cpu_name ?? null,
      cpuCores: body.cpu_cores,
      cpuGhz: body.cpu_ghz ?? null,
      cpuRamMb: body.cpu_ram,
      diskSpaceGb: body.disk_space,
      diskBwMbps: body.disk_bw ?? null,
      diskName: body.disk_name ?? null,
      inetUpMbps: body.inet_up,
      inetDownMbps: body.inet_down,
      directPortCount: body.direct_port_count ?? 0,
      publicIpaddr: body.public_ipaddr ?? null,
      geolocation: body.geolocation ?? null,
      pcieGen: body.pci_gen ?? null,
      pcieBwGbps: body.pcie_bw ?? null,
      hostingType: body.hosting_type ?? 0,
      vmsEnabled: body.vms_enabled ?? false,
    };
    const { machineId } = await this.commands.execute(
      new RegisterMachineCommand(principal.userId, hardware, metadata),
    );
    return { success: true, machine_id: machineId, id: machineId };
  }

  /** `vastai show machines`: {machines: [...]} of the caller. */
  @Get('machines')
  @RequirePermission('machine_read')
  @ApiContract({ ok: ANSWERS.machines })
  async ownMachines(@CallOf() { caller: principal }: Call) {
    return { success: true, machines: await this.queries.execute(new ListMachinesQuery(principal.userId)) };
  }

  /** List and price a machine ("set price" too: there is no separate command). */
  @Put('machines/create_asks')
  @RequirePermission('machine_write')
  @ApiContract({
    body: BODIES.createAsks,
    ok: ANSWERS.listed,
    errors: { 400: ['invalid_ask'], 404: ['no_such_machine'] },
  })
  async createAsks(@Body() body: CreateAsksRequest, @CallOf() { caller: principal, metadata }: Call) {
    const machineId = optionalNumber('machine', body.machine);
    if (machineId === null || !Number.isInteger(machineId))
      throw ApiError.badRequest('machine (the machine id) is required');
    await this.commands.execute(new ListMachineCommand(principal.userId, machineId, askFrom(body), metadata));
    return { success: true, extended: false, msg: `Machine ${machineId} listed` };
  }

  /**
   * `vastai defrag machines`: the caller's machines among the ids, each with its offers (largest first). GPUs
   * are counted, not numbered, so free GPUs are one block already: nothing is moved (docs/marketplace.md).
   */
  @Put('machines/defrag_offers')
  @RequirePermission('machine_write')
  @ApiContract({ body: BODIES.defrag, ok: ANSWERS.defragged })
  async defrag(@Body() body: DefragRequest, @CallOf() { caller: principal }: Call) {
    const ids = body.machine_ids.map((raw) => optionalNumber('machine_ids', raw));
    if (ids.some((id) => id === null || !Number.isInteger(id)))
      throw ApiError.badRequest('machine_ids must be a list of machine ids');
    const machines = await this.queries.execute(new DefragMachinesQuery(principal.userId, ids as number[]));
    return {
      success: true,
      msg: `${machines.length} machine(s) defragmented: their free GPUs form one block, offered as the largest chunks`,
      machines,
    };
  }

  /** `vastai show machine 42`: a bare list. */
  @Get('machines/:id')
  @RequirePermission('machine_read')
  @ApiContract({ ok: ANSWERS.machine })
  async oneMachine(@Param('id', machineIdPipe) id: number, @CallOf() { caller: principal }: Call) {
    return this.queries.execute(new ListMachinesQuery(principal.userId, id));
  }

  @Delete('machines/:id/asks')
  @RequirePermission('machine_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 404: ['no_such_machine'] } })
  async unlist(@Param('id', machineIdPipe) id: number, @CallOf() { caller: principal, metadata }: Call) {
    await this.commands.execute(new UnlistMachineCommand(principal.userId, id, metadata));
    return { success: true, msg: `Machine ${id} unlisted` };
  }

  /**
   * `vastai delete machine`: the owner's machine leaves search and every list (MachineDeleted); refused (409
   * machine_in_use) while other users have instances on it, the host's own being disregarded.
   */
  @Post('machines/:id/force_delete')
  @HttpCode(200)
  @RequirePermission('machine_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 404: ['no_such_machine'], 409: ['machine_in_use'] } })
  async forceDelete(@Param('id', machineIdPipe) id: number, @CallOf() { caller: principal, metadata }: Call) {
    await this.commands.execute(new DeleteMachineCommand(principal.userId, id, metadata));
    return { success: true, msg: `Machine ${id} deleted` };
  }

  @Put('machines/:id/minbid')
  @RequirePermission('machine_write')
  @ApiContract({
    body: BODIES.minBid,
    ok: ANSWERS.msg,
    errors: { 400: ['invalid_ask'], 404: ['no_such_machine'] },
  })
  async minBid(
    @Param('id', machineIdPipe) id: number,
    @Body() body: MinBidRequest,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const price = optionalNumber('price', body.price);
    if (price === null) throw ApiError.badRequest('price is required');
    await this.commands.execute(new SetMinBidCommand(principal.userId, id, price, metadata));
    return { success: true, msg: `Min bid of machine ${id} set to ${price}` };
  }

  /** Admins only: verified machines are what the CLI's default search shows. */
  @Put('machines/:id/verification')
  @RequirePermission('machine_write')
  @ApiContract({ body: BODIES.verification, ok: ANSWERS.verification, errors: { 404: ['no_such_machine'] } })
  async verify(
    @Param('id', machineIdPipe) id: number,
    @Body() body: VerificationRequest,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    await this.commands.execute(
      new SetVerificationCommand(principal.userId, id, body.verification, metadata),
    );
    return { success: true, verification: body.verification };
  }

  /** The host agent's heartbeat; reliability is up time over a rolling window. */
  @Post('machines/:id/heartbeat')
  @HttpCode(200)
  @RequirePermission('machine_write')
  @ApiContract({ ok: ANSWERS.heartbeat, errors: { 404: ['no_such_machine'] } })
  async heartbeat(@Param('id', machineIdPipe) id: number, @CallOf() { caller: principal, metadata }: Call) {
    const { reliability } = await this.commands.execute(
      new RecordHeartbeatCommand(principal.userId, id, metadata),
    );
    return { success: true, reliability };
  }

  /** No auth: the real CLI calls it at every start. */
  @Public()
  @Get('gpu_names/unique')
  @ApiContract({ ok: ANSWERS.gpuNames })
  async gpuNames() {
    return { success: true, gpu_names: await this.queries.execute(new GpuNamesQuery()) };
  }
}
