import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  type MaintenanceCanceled,
  type MaintenanceWindowColumns,
} from '@rigmarket/contracts';
import type { ContextRuntime, CommandBody } from '@rigmarket/event-sourcing';
import { machineOwner } from '../read-models/known-machines/queries';
import { SCHEMA } from '../schema';
import { SYNC_RUNTIME } from '../sync-maintenance.tokens';
import { type MaintenanceCommand, maintenanceDecider, maintenanceStreamId } from './maintenance.decider';

type MaintenanceCommandBody = CommandBody<MaintenanceCommand>;

function runMaintenanceCommand(
  runtime: ContextRuntime,
  command: MaintenanceCommandBody,
  metadata: EventMetadata,
) {
  return runtime.runner.run(maintenanceStreamId(command.machineId), maintenanceDecider, command, metadata);
}

/** The spec's failure for an unknown machine, or one that is not the caller's (the same answer: no probing). */
export const noSuchMachine = (machineId: number, userId: number) =>
  new ApiError(404, 'no_such_machine', 'no such machine id', { machine_id: machineId, user_id: userId });

async function assertOwner(runtime: ContextRuntime, machineId: number, userId: number): Promise<void> {
  if ((await machineOwner(runtime.db, machineId)) !== userId) throw noSuchMachine(machineId, userId);
}

export interface ScheduledWindow {
  windowId: number;
  startTime: number;
  endTime: number;
}

export class ScheduleMaintenanceCommand extends Command<ScheduledWindow> {
  constructor(
    readonly userId: number,
    readonly machineId: number,
    readonly startTime: number,
    readonly durationHours: number,
    readonly category: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ScheduleMaintenanceCommand)
export class ScheduleMaintenanceHandler implements ICommandHandler<ScheduleMaintenanceCommand> {
  constructor(@Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({
    userId,
    machineId,
    startTime,
    durationHours,
    category,
    metadata,
  }: ScheduleMaintenanceCommand): Promise<ScheduledWindow> {
    await assertOwner(this.runtime, machineId, userId);
    const windowId = await this.runtime.nextId('maintenance_window_ids');
    await runMaintenanceCommand(
      this.runtime,
      {
        type: 'ScheduleMaintenance',
        machineId,
        windowId,
        ownerId: userId,
        startTime,
        durationHours,
        category,
      },
      metadata,
    );
    return { windowId, startTime, endTime: startTime + durationHours * 3600 };
  }
}

export class CancelMaintenanceCommand extends Command<{ deleted: number; ctime: number }> {
  constructor(
    readonly userId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CancelMaintenanceCommand)
export class CancelMaintenanceHandler implements ICommandHandler<CancelMaintenanceCommand> {
  constructor(@Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({
    userId,
    machineId,
    metadata,
  }: CancelMaintenanceCommand): Promise<{ deleted: number; ctime: number }> {
    await assertOwner(this.runtime, machineId, userId);
    const result = await runMaintenanceCommand(
      this.runtime,
      { type: 'CancelMaintenance', machineId },
      metadata,
    );
    const canceled = result.events.find((e) => e.type === 'MaintenanceCanceled') as
      MaintenanceCanceled | undefined;
    return {
      deleted: canceled?.data.windowIds.length ?? 0,
      ctime: this.runtime.infra.clock.now().getTime() / 1000,
    };
  }
}

/** A row of `vastai show maints` (docs/client-compat.md 2.13). */
export interface MaintenanceView {
  machine_id: number;
  start_time: number;
  end_time: number;
  duration_hours: number;
  maintenance_category: string;
  window_id: number;
}

export class ListMaintenancesQuery extends Query<MaintenanceView[]> {
  constructor(
    readonly userId: number,
    /** null = every machine of the caller */
    readonly machineIds: number[] | null,
  ) {
    super();
  }
}

/** The caller's windows that have not ended, soonest first. */
@QueryHandler(ListMaintenancesQuery)
export class ListMaintenancesHandler implements IQueryHandler<ListMaintenancesQuery> {
  constructor(@Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ userId, machineIds }: ListMaintenancesQuery): Promise<MaintenanceView[]> {
    const now = this.runtime.infra.clock.now().getTime() / 1000;
    const params: unknown[] = [userId, now];
    const byMachine = machineIds === null ? '' : `AND machine_id = ANY($3::int[])`;
    if (machineIds !== null) params.push(machineIds);
    const rows = await this.runtime.db.query<MaintenanceWindowColumns & { window_id: number }>(
      `SELECT window_id, machine_id, start_time, end_time, duration_hours, category FROM ${SCHEMA}.maintenance_windows
        WHERE owner_id = $1 AND end_time > $2 ${byMachine} ORDER BY start_time, window_id`,
      params,
    );
    return rows.map((r) => ({
      machine_id: Number(r.machine_id),
      start_time: Number(r.start_time),
      end_time: Number(r.end_time),
      duration_hours: Number(r.duration_hours),
      maintenance_category: r.category,
      window_id: Number(r.window_id),
    }));
  }
}
