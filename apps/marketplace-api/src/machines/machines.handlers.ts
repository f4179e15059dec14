import { Inject } from '@nestjs/common';
import { QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  type MachineAsk,
  type MachineHardware,
  type MachineVerification,
} from '@rigmarket/contracts';
import type { ContextRuntime, CommandBody } from '@rigmarket/event-sourcing';
import { GPUS_ALLOCATED } from '../read-models/machines/offers';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { computeScore } from './gpu-models';
import { recordBeat } from './liveness';
import {
  type MachineCommand,
  MachineErrors,
  type MachineState,
  machineDecider,
  machineStreamId,
  reliabilityOf,
} from './machine.decider';

type MachineCommandBody = CommandBody<MachineCommand>;

async function runMachineCommand(
  runtime: ContextRuntime,
  machineId: number,
  command: MachineCommandBody,
  metadata: EventMetadata,
): Promise<MachineState> {
  const result = await runtime.runner.run(machineStreamId(machineId), machineDecider, command, metadata);
  return result.state;
}

export class RegisterMachineCommand extends Command<{ machineId: number }> {
  constructor(
    readonly ownerId: number,
    readonly hardware: MachineHardware,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(RegisterMachineCommand)
export class RegisterMachineHandler implements ICommandHandler<RegisterMachineCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: RegisterMachineCommand): Promise<{ machineId: number }> {
    await enforceQuota(
      this.runtime.db,
      QUOTAS.machines,
      `SELECT count(*) AS n FROM ${this.runtime.schema}.machines WHERE owner_id = $1`,
      [command.ownerId],
    );
    const machineId = await this.runtime.nextId('machine_ids');
    const { dlperf, tflops } = computeScore(
      command.hardware.gpuName,
      command.hardware.numGpus,
      command.hardware.gpuRamMb,
    );
    await runMachineCommand(
      this.runtime,
      machineId,
      {
        type: 'RegisterMachine',
        machineId,
        ownerId: command.ownerId,
        hardware: command.hardware,
        dlperf,
        tflops,
      },
      command.metadata,
    );
    return { machineId };
  }
}

export class ListMachineCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly ask: Partial<MachineAsk>,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ListMachineCommand)
export class ListMachineHandler implements ICommandHandler<ListMachineCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: ListMachineCommand): Promise<void> {
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'ListMachine', requesterId: command.requesterId, ask: command.ask },
      command.metadata,
    );
  }
}

export class UnlistMachineCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(UnlistMachineCommand)
export class UnlistMachineHandler implements ICommandHandler<UnlistMachineCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: UnlistMachineCommand): Promise<void> {
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'UnlistMachine', requesterId: command.requesterId },
      command.metadata,
    );
  }
}

export class SetMinBidCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly minBid: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(SetMinBidCommand)
export class SetMinBidHandler implements ICommandHandler<SetMinBidCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: SetMinBidCommand): Promise<void> {
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'SetMinBid', requesterId: command.requesterId, minBid: command.minBid },
      command.metadata,
    );
  }
}

export class SetVerificationCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly verification: MachineVerification,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(SetVerificationCommand)
export class SetVerificationHandler implements ICommandHandler<SetVerificationCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: SetVerificationCommand): Promise<void> {
    const admins = await this.runtime.db.query(`SELECT 1 FROM ${SCHEMA}.admin_users WHERE user_id = $1`, [
      command.requesterId,
    ]);
    if (admins.length === 0) throw ApiError.forbidden("Only an admin may set a machine's verification");
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'SetVerification', verification: command.verification },
      command.metadata,
    );
  }
}

export class RecordHeartbeatCommand extends Command<{ reliability: number }> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(RecordHeartbeatCommand)
export class RecordHeartbeatHandler implements ICommandHandler<RecordHeartbeatCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: RecordHeartbeatCommand): Promise<{ reliability: number }> {
    const { state } = await this.runtime.runner.load(machineStreamId(command.machineId), machineDecider);
    // Another host's machine is reported as missing (the decider's rule), before anything is recorded.
    if (state.status !== 'registered' || state.ownerId !== command.requesterId)
      throw ApiError.notFound('no such machine id', MachineErrors.notFound);
    const now = this.runtime.runner.clock.now().getTime() / 1000;
    const slots = await this.runtime.db.transaction((sql) => recordBeat(sql, command.machineId, now));
    const reliability = reliabilityOf(slots, state.registeredAt, now);
    // An event only when the reliability moved.
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'RecordHeartbeat', requesterId: command.requesterId, reliability },
      command.metadata,
    );
    return { reliability };
  }
}

interface MachineViewRow {
  machine_id: number;
  owner_id: number;
  gpu_name: string;
  num_gpus: number;
  listed: boolean;
  hardware: MachineHardware | string | null;
  ask: MachineAsk | string | null;
  verification: string;
  reliability: number;
  dlperf: number;
  gpus_allocated: number;
  listed_at: Date | string | null;
  details: object | string;
}

const json = <T>(value: T | string | null): T | null =>
  typeof value === 'string' ? (JSON.parse(value) as T) : value;

/** A machine as `vastai show machines` reads it (docs/client-compat.md 2.14). */
export function machineView(row: MachineViewRow): Record<string, unknown> {
  const hw = json(row.hardware);
  const ask = json(row.ask);
  const numGpus = Number(row.num_gpus);
  const allocated = Number(row.gpus_allocated);
  return {
    ...(json(row.details) ?? {}),
    id: Number(row.machine_id),
    machine_id: Number(row.machine_id),
    owner_id: Number(row.owner_id),
    num_gpus: numGpus,
    gpu_name: row.gpu_name,
    listed: row.listed,
    hostname: hw?.hostname ?? null,
    gpu_ram: hw?.gpuRamMb ?? null,
    cpu_name: hw?.cpuName ?? null,
    cpu_cores: hw?.cpuCores ?? null,
    cpu_ram: hw?.cpuRamMb ?? null,
    disk_space: hw?.diskSpaceGb ?? null,
    cuda_max_good: hw?.cudaMaxGood ?? null,
    driver_version: hw?.driverVersion ?? null,
    compute_cap: hw?.computeCap ?? null,
    inet_up: hw?.inetUpMbps ?? null,
    inet_down: hw?.inetDownMbps ?? null,
    direct_port_count: hw?.directPortCount ?? null,
    public_ipaddr: hw?.publicIpaddr ?? null,
    geolocation: hw?.geolocation ?? null,
    pcie_bw: hw?.pcieBwGbps ?? null,
    pci_gen: hw?.pcieGen ?? null,
    dlperf: Number(row.dlperf),
    reliability2: Number(row.reliability),
    verification: row.verification,
    num_reports: 0,
    listed_gpu_cost: ask?.priceGpu ?? null,
    min_bid_price: ask?.minBid ?? null,
    credit_discount_max: ask?.creditDiscountMax ?? null,
    listed_storage_cost: ask?.priceDisk ?? null,
    listed_inet_up_cost: ask?.priceInetUp ?? null,
    listed_inet_down_cost: ask?.priceInetDown ?? null,
    min_chunk: ask?.minChunk ?? null,
    end_date: ask?.endDate ?? null,
    gpu_occupancy: Array.from({ length: numGpus }, (_, i) => (i < allocated ? 'D' : 'x')).join(' '),
  };
}

const MACHINE_COLUMNS = `machine_id, owner_id, gpu_name, num_gpus, listed, hardware, ask, verification, reliability, dlperf, ${GPUS_ALLOCATED}, listed_at, details`;

export class ListMachinesQuery extends Query<Record<string, unknown>[]> {
  constructor(
    readonly ownerId: number,
    readonly machineId?: number,
  ) {
    super();
  }
}

@QueryHandler(ListMachinesQuery)
export class ListMachinesHandler implements IQueryHandler<ListMachinesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: ListMachinesQuery): Promise<Record<string, unknown>[]> {
    const rows =
      query.machineId === undefined
        ? await this.runtime.db.query<MachineViewRow>(
            `SELECT ${MACHINE_COLUMNS} FROM ${SCHEMA}.machines m WHERE owner_id = $1 ORDER BY machine_id`,
            [query.ownerId],
          )
        : await this.runtime.db.query<MachineViewRow>(
            `SELECT ${MACHINE_COLUMNS} FROM ${SCHEMA}.machines m WHERE owner_id = $1 AND machine_id = $2`,
            [query.ownerId, query.machineId],
          );
    return rows.map(machineView);
  }
}

export class GpuNamesQuery extends Query<string[]> {}

@QueryHandler(GpuNamesQuery)
export class GpuNamesHandler implements IQueryHandler<GpuNamesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(): Promise<string[]> {
    const rows = await this.runtime.db.query<{ gpu_name: string }>(
      `SELECT DISTINCT gpu_name FROM ${SCHEMA}.machines WHERE listed ORDER BY gpu_name`,
    );
    return rows.map((r) => r.gpu_name);
  }
}

export class DeleteMachineCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** `vastai delete machine`: refused while other users' instances are on the machine (the host's own are disregarded). */
@CommandHandler(DeleteMachineCommand)
export class DeleteMachineHandler implements ICommandHandler<DeleteMachineCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: DeleteMachineCommand): Promise<void> {
    const [row] = await this.runtime.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${SCHEMA}.instance_allocations
        WHERE machine_id = $1 AND renter_id IS DISTINCT FROM $2`,
      [command.machineId, command.requesterId],
    );
    await runMachineCommand(
      this.runtime,
      command.machineId,
      { type: 'DeleteMachine', requesterId: command.requesterId, renterInstances: Number(row?.n ?? 0) },
      command.metadata,
    );
  }
}

/** One machine after `vastai defrag machines`: its offers, largest first. */
export interface DefraggedMachine {
  machine_id: number;
  num_gpus: number;
  gpus_free: number;
  offers: number[];
}

export class DefragMachinesQuery extends Query<DefraggedMachine[]> {
  constructor(
    readonly ownerId: number,
    readonly machineIds: readonly number[],
  ) {
    super();
  }
}

/**
 * `vastai defrag machines`: GPUs here are counted, not numbered, so a machine's free GPUs always form one
 * block and its offers (chunks of min_chunk, 2x, 4x... and the whole free count) are already the largest
 * contiguous ones: the answer is each of the caller's machines with its offers, nothing is moved.
 */
@QueryHandler(DefragMachinesQuery)
export class DefragMachinesHandler implements IQueryHandler<DefragMachinesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: DefragMachinesQuery): Promise<DefraggedMachine[]> {
    const rows = await this.runtime.db.query<{
      machine_id: number;
      num_gpus: number;
      gpus_allocated: number;
      offers: number[] | null;
    }>(
      `SELECT m.machine_id, m.num_gpus, ${GPUS_ALLOCATED},
              (SELECT array_agg(o.num_gpus ORDER BY o.num_gpus DESC) FROM ${SCHEMA}.offers o WHERE o.machine_id = m.machine_id) AS offers
         FROM ${SCHEMA}.machines m WHERE m.owner_id = $1 AND m.machine_id = ANY($2::int[]) ORDER BY m.machine_id`,
      [query.ownerId, query.machineIds],
    );
    return rows.map((r) => ({
      machine_id: Number(r.machine_id),
      num_gpus: Number(r.num_gpus),
      gpus_free: Number(r.num_gpus) - Number(r.gpus_allocated),
      offers: (r.offers ?? []).map(Number),
    }));
  }
}
