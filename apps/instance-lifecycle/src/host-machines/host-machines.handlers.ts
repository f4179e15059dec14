import { Inject } from '@nestjs/common';
import {
  Command,
  CommandBus,
  CommandHandler,
  type ICommandHandler,
  type IQueryHandler,
  Query,
  QueryHandler,
} from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { allocationDecider, allocationStreamId, gpusInUse } from '../allocation/allocation.decider';
import { requestInstanceBackupIn } from '../backups/backups';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { CreateInstanceCommand } from '../instances/create-instance/create-instance.command';
import type { CreateRequest } from '../instances/create-instance/create-request';
import { DestroyInstanceCommand } from '../instances/destroy-instance/destroy-instance.command';
import { ALLOCATION_ATTEMPTS, releaseOnDestroy, runInstanceCommand } from '../instances/instance-commands';
import { type MachineReport, machineReports } from '../read-models/machine-reports/queries';
import { type MachineRecord, findMachine } from '../read-models/market-machines/queries';
import { SCHEMA } from '../schema';
import { type DefaultJob, defaultJobDecider, defaultJobStreamId } from './default-job.decider';

/** The caller's own machine, as instance-lifecycle knows it; another host's (or a deleted one) is missing. */
async function ownMachine(
  runtime: ContextRuntime,
  hostId: number,
  machineId: number,
): Promise<MachineRecord> {
  const machine = await findMachine(runtime.db, machineId);
  if (!machine || machine.ownerId !== hostId)
    throw ApiError.notFound('no such machine id', 'no_such_machine');
  return machine;
}

/** The default job's instance: the host's own rental of the idle GPUs, at a bid of 0. */
function defaultJobRequest(job: DefaultJob): CreateRequest {
  return {
    image: job.image,
    templateHashId: null,
    label: 'default job',
    disk: null,
    runtype: job.args === null ? null : 'args',
    targetState: 'running',
    price: 0,
    env: {},
    onstart: null,
    argsStr: null,
    args: job.args,
    useJupyterLab: null,
    jupyterDir: null,
    pythonUtf8: false,
    langUtf8: false,
    imageLogin: null,
    cancelUnavail: false,
    extraFilters: {},
    vm: false,
    volume: null,
  };
}

export class SetDefaultJobCommand extends Command<{ instanceId: number | null }> {
  constructor(
    readonly hostId: number,
    readonly machineId: number,
    readonly job: DefaultJob,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * `vastai set defjob`: the previous default job's instance (if any) is destroyed, a new one takes the
 * machine's idle GPUs (none idle: the job is recorded without an instance), and the job is recorded on
 * `defjob-<machineId>`.
 */
@CommandHandler(SetDefaultJobCommand)
export class SetDefaultJobHandler implements ICommandHandler<SetDefaultJobCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
  ) {}

  async execute({ hostId, machineId, job, metadata }: SetDefaultJobCommand) {
    const machine = await ownMachine(this.runtime, hostId, machineId);
    const { state } = await this.runtime.runner.load(defaultJobStreamId(machineId), defaultJobDecider);
    if (state.job !== null && state.instanceId !== null)
      await this.commands.execute(new DestroyInstanceCommand(hostId, state.instanceId, metadata));
    const { state: allocation } = await this.runtime.runner.load(
      allocationStreamId(machineId),
      allocationDecider,
    );
    const idle = machine.numGpus - gpusInUse(allocation);
    let instanceId: number | null = null;
    if (idle > 0) {
      const created = await this.commands.execute(
        new CreateInstanceCommand(
          hostId,
          machineId * 1000 + idle,
          defaultJobRequest(job),
          metadata,
          null,
          true,
        ),
      );
      instanceId = created.instanceId;
    }
    await this.runtime.runner.run(
      defaultJobStreamId(machineId),
      defaultJobDecider,
      { type: 'SetDefaultJob', machineId, requesterId: hostId, ownerId: machine.ownerId, job, instanceId },
      metadata,
    );
    return { instanceId };
  }
}

export class RemoveDefaultJobCommand extends Command<void> {
  constructor(
    readonly hostId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** `vastai remove defjob`: the job is removed and its instance destroyed (its GPUs free again). */
@CommandHandler(RemoveDefaultJobCommand)
export class RemoveDefaultJobHandler implements ICommandHandler<RemoveDefaultJobCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
  ) {}

  async execute({ hostId, machineId, metadata }: RemoveDefaultJobCommand): Promise<void> {
    const machine = await ownMachine(this.runtime, hostId, machineId);
    const { decided } = await this.runtime.runner.run(
      defaultJobStreamId(machineId),
      defaultJobDecider,
      { type: 'RemoveDefaultJob', machineId, requesterId: hostId, ownerId: machine.ownerId },
      metadata,
    );
    for (const event of decided)
      if (event.type === 'DefaultJobRemoved' && event.data.instanceId !== null)
        await this.commands.execute(new DestroyInstanceCommand(hostId, event.data.instanceId, metadata));
  }
}

export interface CleanedUp {
  instanceIds: number[];
  diskGb: number;
}

export class CleanupMachineCommand extends Command<CleanedUp> {
  constructor(
    readonly hostId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * `vastai cleanup machine`: every instance on the machine whose contract ended (the listing's end date has
 * passed) and which no longer runs is destroyed: the host deletes its container and disk, its GPUs are free.
 * Its renter did not destroy it, so a backup of it is taken first (in the same transaction: its host is
 * told to back it up before it removes the container; docs/instances.md, "Instance backups").
 */
@CommandHandler(CleanupMachineCommand)
export class CleanupMachineHandler implements ICommandHandler<CleanupMachineCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ hostId, machineId, metadata }: CleanupMachineCommand): Promise<CleanedUp> {
    const machine = await ownMachine(this.runtime, hostId, machineId);
    const contractEnd = machine.ask?.endDate ?? null;
    const rows = await this.runtime.db.query<{ instance_id: number; disk: string | null }>(
      `SELECT instance_id, details->'config'->>'disk' AS disk FROM ${SCHEMA}.instances
        WHERE machine_id = $1 AND NOT destroyed ORDER BY instance_id`,
      [machineId],
    );
    const cleaned: CleanedUp = { instanceIds: [], diskGb: 0 };
    for (const row of rows) {
      const instanceId = Number(row.instance_id);
      const { decided } = await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'ExpireInstance', hostId, contractEnd },
        metadata,
        {
          // Its GPUs are released in the same append.
          alongside: releaseOnDestroy(this.runtime),
          maxAttempts: ALLOCATION_ATTEMPTS,
          alsoInTransaction: async (sql, envelopes, _before, events) => {
            const destroyed = events.find((e) => e.type === 'InstanceDestroyed');
            if (!destroyed || destroyed.type !== 'InstanceDestroyed') return;
            const { renter, machineId: onMachine } = destroyed.data;
            await requestInstanceBackupIn(
              this.runtime,
              sql,
              { contractId: instanceId, ownerId: renter, machineId: onMachine },
              metadata,
              new Date(envelopes[0]!.occurredAt),
            );
          },
        },
      );
      if (!decided.some((e) => e.type === 'InstanceDestroyed')) continue;
      cleaned.instanceIds.push(instanceId);
      cleaned.diskGb += Number(row.disk ?? 0);
    }
    return cleaned;
  }
}

export class MachineReportsQuery extends Query<MachineReport[]> {
  constructor(
    readonly hostId: number,
    readonly machineId: number,
  ) {
    super();
  }
}

@QueryHandler(MachineReportsQuery)
export class MachineReportsHandler implements IQueryHandler<MachineReportsQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ hostId, machineId }: MachineReportsQuery): Promise<MachineReport[]> {
    await ownMachine(this.runtime, hostId, machineId);
    return machineReports(this.runtime.db, machineId);
  }
}

export const HOST_MACHINE_HANDLERS = [
  SetDefaultJobHandler,
  RemoveDefaultJobHandler,
  CleanupMachineHandler,
  MachineReportsHandler,
];
