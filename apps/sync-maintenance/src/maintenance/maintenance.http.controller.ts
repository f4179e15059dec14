import { Body, Controller, Get, Param, Put, Query as QueryParam } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsOptional } from 'class-validator';
import {
  CancelMaintenanceCommand,
  ListMaintenancesQuery,
  ScheduleMaintenanceCommand,
} from './maintenance.handlers';
import { ANSWERS, BODIES, QUERIES } from '../sync-maintenance.openapi';

/** `vastai schedule maint 42 --sdate S --duration H --maintenance_category C` (floats). */
export class ScheduleMaintenanceRequest {
  @IsOptional() sdate?: unknown;
  @IsOptional() duration?: unknown;
  @IsOptional() maintenance_category?: unknown;
}

/** `vastai cancel maint 42` sends {client_id, machine_id}; the spec says no body. Both are fine. */
export class CancelMaintenanceRequest {
  @IsOptional() machine_id?: unknown;
}

function numberOf(raw: unknown, msg: string): number {
  const value =
    typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw new ApiError(400, 'invalid_args', msg);
  return value;
}

function machineIdOf(raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new ApiError(400, 'invalid_args', 'The machine id must be an integer');
  return Number(raw);
}

/** `machine_ids=[42, 43]` (JSON, as the CLI sends it) or `42,43`. */
export function machineIdsOf(raw: unknown): number[] | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const text = String(raw).trim();
  let items: unknown[];
  try {
    const parsed: unknown = JSON.parse(text.startsWith('[') ? text : `[${text}]`);
    items = Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    throw new ApiError(400, 'invalid_args', 'machine_ids must be a JSON list of machine ids, e.g. [42, 43]');
  }
  return items.map((item) => {
    const id = Number(item);
    if (!Number.isSafeInteger(id))
      throw new ApiError(
        400,
        'invalid_args',
        'machine_ids must be a JSON list of machine ids, e.g. [42, 43]',
      );
    return id;
  });
}

/**
 * Host maintenance windows. These paths sit under /api/v0/machines, which marketplace-api owns: the
 * edge routes them here (infra/nginx), and the embedded platform registers this module first so that
 * `machines/maintenances` is not taken for marketplace's `machines/:id`.
 */
@Controller('api/v0/machines')
@Authenticated()
export class MaintenanceController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get('maintenances')
  @RequirePermission('machine_read')
  @ApiContract({ query: QUERIES.maintenances, ok: ANSWERS.windows, errors: { 400: ['invalid_args'] } })
  list(@QueryParam('machine_ids') machineIds: unknown, @CallOf() { caller: principal }: Call) {
    return this.queries.execute(new ListMaintenancesQuery(principal.userId, machineIdsOf(machineIds)));
  }

  @Put(':id/dnotify')
  @RequirePermission('machine_write')
  @ApiContract({
    body: BODIES.schedule,
    ok: ANSWERS.scheduled,
    errors: { 400: ['invalid_args'], 404: ['no_such_machine'], 409: ['maintenance_overlaps'] },
  })
  async schedule(
    @Param('id') idRaw: string,
    @Body() body: ScheduleMaintenanceRequest,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const machineId = machineIdOf(idRaw);
    const startTime = numberOf(body.sdate, 'sdate must be the window start in epoch seconds');
    const durationHours = numberOf(body.duration, 'duration must be the window length in hours');
    const category =
      typeof body.maintenance_category === 'string' && body.maintenance_category.trim() !== ''
        ? body.maintenance_category.trim()
        : 'not provided';
    const window = await this.commands.execute(
      new ScheduleMaintenanceCommand(
        principal.userId,
        machineId,
        startTime,
        durationHours,
        category,
        metadata,
      ),
    );
    return {
      success: true,
      msg: `Maintenance window ${window.windowId} scheduled on machine ${machineId}: ${durationHours} hours from ${new Date(startTime * 1000).toISOString()}; renters on the machine are notified`,
      machine_id: machineId,
      window_id: window.windowId,
      start_time: window.startTime,
      end_time: window.endTime,
    };
  }

  @Put(':id/cancel_maint')
  @RequirePermission('machine_write')
  @ApiContract({
    body: BODIES.cancelMaintenance,
    ok: ANSWERS.canceledMaintenance,
    errors: { 400: ['invalid_args'], 404: ['no_such_machine'] },
  })
  async cancel(
    @Param('id') idRaw: string,
    @Body() _body: CancelMaintenanceRequest,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const machineId = machineIdOf(idRaw);
    const { deleted, ctime } = await this.commands.execute(
      new CancelMaintenanceCommand(principal.userId, machineId, metadata),
    );
    return {
      success: true,
      ctime,
      machine_id: machineId,
      msg: `deleted ${deleted} scheduled maintenance window${deleted === 1 ? '' : 's'} on machine ${machineId}`,
    };
  }
}
