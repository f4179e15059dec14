import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime } from '@rigmarket/event-sourcing';
import { machineDecider, machineStreamId } from '../machines/machine.decider';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { coerce, type FieldSpec, type Filter, filterSql, parseFilter } from '../offers/offer-query';
import {
  type CloneSource,
  type VolumeCommand,
  cloneSource,
  volumeDecider,
  volumeStreamId,
} from './volume.decider';
import { volumeSpaceDecider, volumeSpaceStreamId } from './volume-space.decider';

/** Host side: list disk space on machines for volumes (`vastai list volume`). */
export class ListVolumeSpaceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly machineIds: number[],
    readonly sizeGb: number,
    readonly priceDisk: number,
    readonly endDate: number | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ListVolumeSpaceCommand)
export class ListVolumeSpaceHandler implements ICommandHandler<ListVolumeSpaceCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: ListVolumeSpaceCommand): Promise<void> {
    for (const machineId of command.machineIds) {
      await this.runtime.runner.run(
        machineStreamId(machineId),
        machineDecider,
        {
          type: 'ListVolumeSpace',
          requesterId: command.requesterId,
          sizeGb: command.sizeGb,
          priceDisk: command.priceDisk,
          endDate: command.endDate,
        },
        command.metadata,
      );
    }
  }
}

export class UnlistVolumeSpaceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly volumeOfferId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(UnlistVolumeSpaceCommand)
export class UnlistVolumeSpaceHandler implements ICommandHandler<UnlistVolumeSpaceCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: UnlistVolumeSpaceCommand): Promise<void> {
    // A volume offer's id is its machine's id.
    await this.runtime.runner.run(
      machineStreamId(command.volumeOfferId),
      machineDecider,
      { type: 'UnlistVolumeSpace', requesterId: command.requesterId },
      command.metadata,
    );
  }
}

export interface VolumeOfferRecord {
  sizeGb: number;
  freeGb: number;
  priceDisk: number;
  /** listed and not expired */
  rentable: boolean;
}

/** A machine's volume listing as the volume_offers read model has it (a volume offer's id is its machine's id). */
export async function findVolumeOffer(
  runtime: ContextRuntime,
  machineId: number,
): Promise<VolumeOfferRecord | null> {
  const rows = await runtime.db.query<{
    free_gb: number;
    size_gb: number;
    price_disk: number;
    rentable: boolean;
  }>(
    `SELECT size_gb - used_gb AS free_gb, size_gb, price_disk, (listed AND (end_date IS NULL OR end_date > $2)) AS rentable
       FROM ${SCHEMA}.volume_offers WHERE machine_id = $1`,
    [machineId, runtime.infra.clock.now().getTime() / 1000],
  );
  const row = rows[0];
  return row
    ? {
        sizeGb: Number(row.size_gb),
        freeGb: Number(row.free_gb),
        priceDisk: Number(row.price_disk),
        rentable: row.rentable === true,
      }
    : null;
}

/** Renter side: a volume from a volume offer (`vastai create volume OFFER -s SIZE -n NAME`). */
export class CreateVolumeCommand extends Command<{ volumeId: number }> {
  constructor(
    readonly ownerId: number,
    readonly offerId: number,
    readonly sizeGb: number,
    readonly name: string | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateVolumeCommand)
export class CreateVolumeHandler implements ICommandHandler<CreateVolumeCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: CreateVolumeCommand): Promise<{ volumeId: number }> {
    return createVolumeOnOffer(this.runtime, command, command.metadata);
  }
}

/**
 * A volume on a volume offer: its space reserved first, on the machine's one stream (concurrent creations
 * cannot overbook it), then the volume's own stream; the space goes back when the volume is refused.
 */
async function createVolumeOnOffer(
  runtime: ContextRuntime,
  wanted: { ownerId: number; offerId: number; sizeGb: number; name: string | null; cloneOf?: CloneSource },
  metadata: EventMetadata,
): Promise<{ volumeId: number }> {
  const offer = await findVolumeOffer(runtime, wanted.offerId);
  if (!offer?.rentable) throw ApiError.notFound(`No volume offer ${wanted.offerId}`, 'no_such_offer');
  const volumeId = await runtime.nextId('volume_ids');
  const create: CommandBody<VolumeCommand> = {
    type: 'CreateVolume',
    volumeId,
    ownerId: wanted.ownerId,
    machineId: wanted.offerId,
    sizeGb: wanted.sizeGb,
    name: wanted.name,
    priceDisk: offer.priceDisk,
    freeGb: offer.freeGb,
    ...(wanted.cloneOf ? { cloneOf: wanted.cloneOf } : {}),
  };
  const space = (type: 'ReserveSpace' | 'ReleaseSpace') =>
    runtime.runner.run(
      volumeSpaceStreamId(wanted.offerId),
      volumeSpaceDecider,
      type === 'ReserveSpace'
        ? { type, machineId: wanted.offerId, volumeId, sizeGb: wanted.sizeGb, listedGb: offer.sizeGb }
        : { type, machineId: wanted.offerId, volumeId },
      metadata,
      { maxAttempts: 50 },
    );
  await space('ReserveSpace');
  try {
    await runtime.runner.run(volumeStreamId(volumeId), volumeDecider, create, metadata);
  } catch (error) {
    await space('ReleaseSpace');
    throw error;
  }
  return { volumeId };
}

/**
 * Renter side: `vastai clone volume SRC OFFER [-s SIZE]`: a new volume on the volume offer, at least the
 * source's size (its size by default), whose data instance-lifecycle has the host agents copy from the
 * source (VolumeCreated's cloneOf). Another user's volume is no such volume.
 */
export class CloneVolumeCommand extends Command<{ volumeId: number }> {
  constructor(
    readonly ownerId: number,
    readonly srcVolumeId: number,
    readonly offerId: number,
    readonly sizeGb: number | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CloneVolumeCommand)
export class CloneVolumeHandler implements ICommandHandler<CloneVolumeCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: CloneVolumeCommand): Promise<{ volumeId: number }> {
    const { state } = await this.runtime.runner.load(volumeStreamId(command.srcVolumeId), volumeDecider);
    const source = cloneSource(state, command.ownerId);
    return createVolumeOnOffer(
      this.runtime,
      {
        ownerId: command.ownerId,
        offerId: command.offerId,
        sizeGb: command.sizeGb ?? source.sizeGb,
        name: null,
        cloneOf: source,
      },
      command.metadata,
    );
  }
}

export class DeleteVolumeCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly volumeId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(DeleteVolumeCommand)
export class DeleteVolumeHandler implements ICommandHandler<DeleteVolumeCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: DeleteVolumeCommand): Promise<void> {
    const { state } = await this.runtime.runner.run(
      volumeStreamId(command.volumeId),
      volumeDecider,
      { type: 'DeleteVolume', requesterId: command.requesterId },
      command.metadata,
    );
    if (state.status !== 'deleted') return;
    const machineId = state.machineId;
    await this.runtime.runner.run(
      volumeSpaceStreamId(machineId),
      volumeSpaceDecider,
      { type: 'ReleaseSpace', machineId, volumeId: command.volumeId },
      command.metadata,
      { maxAttempts: 50 },
    );
  }
}

export interface VolumeView {
  id: number;
  name: string | null;
  /** The name again, under the field the CLI's table reads. */
  label: string | null;
  size: number;
  disk_space: number;
  machine_id: number;
  start_date: number;
  storage_cost: number;
  status: string;
  type: 'local_volume';
  host_id: number | null;
  reliability2: number | null;
  verification: string | null;
  geolocation: string | null;
  instances: number[];
  /** `clone volume`: the volume it copies (null for any other volume). */
  cloned_from: number | null;
  /** Why a clone's copy failed (null otherwise). */
  status_msg: string | null;
}

interface VolumeRow {
  volume_id: number;
  name: string | null;
  size_gb: number;
  machine_id: number;
  start_date: number;
  price_disk: number;
  owner_id: number | null;
  reliability: number | null;
  verification: string | null;
  hardware: object | string | null;
  instances: number[] | null;
  cloned_from: number | null;
  clone_status: string | null;
  clone_msg: string | null;
}

export class ListVolumesQuery extends Query<VolumeView[]> {
  constructor(
    readonly ownerId: number,
    readonly type: string,
  ) {
    super();
  }
}

@QueryHandler(ListVolumesQuery)
export class ListVolumesHandler implements IQueryHandler<ListVolumesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: ListVolumesQuery): Promise<VolumeView[]> {
    // Only local volumes exist so far; network volumes are not offered.
    if (query.type === 'network_volume') return [];
    const rows = await this.runtime.db.query<VolumeRow>(
      `SELECT v.volume_id, v.name, v.size_gb, v.machine_id, v.start_date, v.price_disk, m.owner_id, m.reliability, m.verification, m.hardware,
              (SELECT array_agg(vi.instance_id ORDER BY vi.instance_id) FROM ${SCHEMA}.volume_instances vi
                WHERE vi.volume_id = v.volume_id) AS instances,
              c.source_volume_id AS cloned_from, c.status AS clone_status, c.status_msg AS clone_msg
         FROM ${SCHEMA}.volumes v LEFT JOIN ${SCHEMA}.machines m ON m.machine_id = v.machine_id
              LEFT JOIN ${SCHEMA}.volume_clones c ON c.volume_id = v.volume_id
        WHERE v.owner_id = $1 AND v.deleted_at IS NULL ORDER BY v.volume_id`,
      [query.ownerId],
    );
    return rows.map((r) => {
      const h = (typeof r.hardware === 'string' ? JSON.parse(r.hardware) : r.hardware) as {
        geolocation?: string | null;
      } | null;
      return {
        id: Number(r.volume_id),
        name: r.name,
        label: r.name,
        size: Number(r.size_gb),
        disk_space: Number(r.size_gb),
        machine_id: Number(r.machine_id),
        start_date: Number(r.start_date),
        storage_cost: Number(r.price_disk),
        // a clone is cloning until its copy completes (then online), or failed with the reason
        status: r.clone_status ?? 'online',
        type: 'local_volume',
        host_id: r.owner_id === null ? null : Number(r.owner_id),
        reliability2: r.reliability === null ? null : Number(r.reliability),
        verification: r.verification,
        geolocation: h?.geolocation ?? null,
        instances: (r.instances ?? []).map(Number),
        cloned_from: r.cloned_from === null ? null : Number(r.cloned_from),
        status_msg: r.clone_msg,
      };
    });
  }
}

const hw = (key: string, cast = '::float8') => `(m.hardware->>'${key}')${cast}`;
const num = (sql: string): FieldSpec => ({ kind: 'number', sql: () => sql });
const str = (sql: string): FieldSpec => ({ kind: 'string', sql: () => sql });

/** Searchable fields of volume offers (docs/client-compat.md 2.15). */
export const VOLUME_FIELDS: Readonly<Record<string, FieldSpec>> = {
  id: num('v.machine_id'),
  machine_id: num('v.machine_id'),
  host_id: num('v.host_id'),
  disk_space: num('(v.size_gb - v.used_gb)'),
  storage_cost: num('v.price_disk'),
  end_date: num('v.end_date'),
  duration: { kind: 'number', sql: (c) => `(v.end_date - ${c.now})` },
  reliability: num('m.reliability'),
  reliability2: num('m.reliability'),
  score: num('m.reliability'),
  cuda_max_good: num(hw('cudaMaxGood')),
  cpu_ghz: num(hw('cpuGhz')),
  disk_bw: num(hw('diskBwMbps')),
  disk_name: str(hw('diskName', '')),
  inet_up: num(hw('inetUpMbps')),
  inet_down: num(hw('inetDownMbps')),
  geolocation: str(hw('geolocation', '')),
  gpu_name: str('m.gpu_name'),
  num_gpus: num('m.num_gpus'),
  verification: str('m.verification'),
  verified: { kind: 'bool', sql: () => `(m.verification = 'verified')` },
  external: { kind: 'bool', sql: () => 'FALSE' },
  rentable: { kind: 'bool', sql: (c) => `(v.listed AND (v.end_date IS NULL OR v.end_date > ${c.now}))` },
};

const CONTROL = new Set(['order', 'limit', 'allocated_storage', 'type', 'select_cols', 'q', 'client_id']);

export interface VolumeSearch {
  filters: Filter[];
  order: Array<{ field: string; direction: 'asc' | 'desc' }>;
  limit: number;
  allocatedStorage: number;
}

export function parseVolumeSearch(body: Record<string, unknown>): VolumeSearch {
  const filters: Filter[] = [];
  for (const [key, raw] of Object.entries(body)) {
    if (CONTROL.has(key)) continue;
    if (!VOLUME_FIELDS[key]) throw ApiError.badRequest(`Unknown filter field: ${key}`, { field: key });
    filters.push(...parseFilter(key, raw, VOLUME_FIELDS));
  }
  const rawOrder = Array.isArray(body.order) ? (body.order as unknown[]) : [['score', 'desc']];
  const order = rawOrder.map((pair) => {
    const [field, direction] = Array.isArray(pair) ? pair : [pair, 'asc'];
    if (!VOLUME_FIELDS[String(field)]) throw ApiError.badRequest(`Unknown order field: ${String(field)}`);
    const dir = String(direction ?? 'asc').toLowerCase();
    if (dir !== 'asc' && dir !== 'desc')
      throw ApiError.badRequest(`Invalid order direction ${String(direction)}: use asc or desc`);
    return { field: String(field), direction: dir as 'asc' | 'desc' };
  });
  const limit =
    body.limit === undefined || body.limit === null ? 100 : Number(coerce('limit', 'number', body.limit));
  const storage =
    body.allocated_storage === undefined || body.allocated_storage === null
      ? 1
      : Number(coerce('allocated_storage', 'number', body.allocated_storage));
  return { filters, order, limit: Math.min(Math.max(Math.floor(limit), 1), 1000), allocatedStorage: storage };
}

export class SearchVolumeOffersQuery extends Query<Record<string, unknown>[]> {
  constructor(readonly search: VolumeSearch) {
    super();
  }
}

@QueryHandler(SearchVolumeOffersQuery)
export class SearchVolumeOffersHandler implements IQueryHandler<SearchVolumeOffersQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ search }: SearchVolumeOffersQuery): Promise<Record<string, unknown>[]> {
    const params: unknown[] = [this.runtime.infra.clock.now().getTime() / 1000, search.allocatedStorage];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const ctx = { price: 'v.price_disk', storage: '$2::float8', now: '$1::float8' };
    const terms = [
      `v.listed AND (v.end_date IS NULL OR v.end_date > $1::float8) AND (v.size_gb - v.used_gb) >= $2::float8`,
      ...filterSql(search.filters, VOLUME_FIELDS, ctx, param),
    ];
    const order = [
      ...search.order.map(
        (o) => `${VOLUME_FIELDS[o.field]!.sql(ctx)} ${o.direction.toUpperCase()} NULLS LAST`,
      ),
      'v.machine_id ASC',
    ];
    const rows = await this.runtime.db.query<Record<string, unknown>>(
      `SELECT v.machine_id, v.host_id, v.size_gb - v.used_gb AS disk_space, v.price_disk, v.end_date, m.reliability, m.verification, m.hardware
         FROM ${SCHEMA}.volume_offers v JOIN ${SCHEMA}.machines m ON m.machine_id = v.machine_id
        WHERE ${terms.join(' AND ')} ORDER BY ${order.join(', ')} LIMIT ${param(search.limit)}`,
      params,
    );
    const now = this.runtime.infra.clock.now().getTime() / 1000;
    return rows.map((r) => {
      const h = (typeof r.hardware === 'string' ? JSON.parse(r.hardware) : r.hardware) as Record<
        string,
        unknown
      >;
      const endDate = r.end_date === null ? null : Number(r.end_date);
      return {
        id: Number(r.machine_id),
        machine_id: Number(r.machine_id),
        host_id: Number(r.host_id),
        disk_space: Number(r.disk_space),
        storage_cost: Number(r.price_disk),
        storage_total_cost: (Number(r.price_disk) * search.allocatedStorage) / 720,
        end_date: endDate,
        duration: endDate === null ? null : endDate - now,
        reliability: Number(r.reliability),
        verification: r.verification,
        verified: r.verification === 'verified',
        cuda_max_good: h.cudaMaxGood ?? null,
        cpu_ghz: h.cpuGhz ?? null,
        disk_bw: h.diskBwMbps ?? null,
        disk_name: h.diskName ?? null,
        driver_version: h.driverVersion ?? null,
        inet_up: h.inetUpMbps ?? null,
        inet_down: h.inetDownMbps ?? null,
        geolocation: h.geolocation ?? null,
      };
    });
  }
}
