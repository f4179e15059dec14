import { Inject } from '@nestjs/common';
import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, DomainError, type EventMetadata, isRefusal } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import type { CreateRequest } from '../create-instance/create-request';
import { CreateInstanceCommand, type CreatedInstance } from '../create-instance/create-instance.command';
import { isJsonObject } from '@rigmarket/http-kit';

/**
 * What `vastai launch instance` asks for in `q` that instance-lifecycle can match on its own view of the
 * marketplace: the GPU model, how many, where, and how many offers to try. The rest of q (score order,
 * reliability, disk) is marketplace's search; here offers are tried cheapest first.
 */
export interface LaunchCriteria {
  gpuNames: string[];
  numGpus: number;
  geolocations: string[] | null;
  limit: number;
}

function values(condition: unknown): unknown[] | null {
  if (condition === undefined || condition === null) return null;
  if (!isJsonObject(condition)) return [condition];
  if (Array.isArray(condition.in)) return condition.in;
  if (condition.eq !== undefined) return [condition.eq];
  return null;
}

export function parseLaunchQuery(q: unknown): LaunchCriteria {
  if (!isJsonObject(q))
    throw ApiError.badRequest(
      'q must be an offer query object, such as {"gpu_name": {"eq": "RTX 4090"}, "num_gpus": {"eq": "1"}}',
    );
  const gpuNames = (values(q.gpu_name) ?? []).map((g) => String(g).replace(/_/g, ' ').trim()).filter(Boolean);
  if (gpuNames.length === 0)
    throw ApiError.badRequest('q.gpu_name is required: which GPU model to launch on');
  const numGpus = Number((values(q.num_gpus) ?? [1])[0]);
  if (!Number.isInteger(numGpus) || numGpus < 1)
    throw ApiError.badRequest('q.num_gpus must be a positive integer');
  const geos = values(q.geolocation);
  const limit = q.limit === undefined || q.limit === null ? 3 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 64)
    throw ApiError.badRequest('q.limit must be an integer from 1 to 64');
  return { gpuNames, numGpus, geolocations: geos ? geos.map(String) : null, limit };
}

export class LaunchInstanceCommand extends Command<CreatedInstance & { offerId: number }> {
  constructor(
    readonly renter: number,
    readonly criteria: LaunchCriteria,
    readonly request: CreateRequest,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** Tries the matching offers cheapest first; an offer taken meanwhile (or in maintenance) gives way to the next. */
@CommandHandler(LaunchInstanceCommand)
export class LaunchInstanceHandler implements ICommandHandler<LaunchInstanceCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
  ) {}

  async execute({
    renter,
    criteria,
    request,
    metadata,
  }: LaunchInstanceCommand): Promise<CreatedInstance & { offerId: number }> {
    // A machine's geolocation reads "City, CC" or "CC"; the CLI's regions are country codes.
    const rows = await this.runtime.db.query<{ machine_id: number }>(
      `SELECT machine_id FROM ${SCHEMA}.market_machines
        WHERE listed AND ask IS NOT NULL AND gpu_name = ANY($1::text[]) AND num_gpus >= $2
          AND ($4::text[] IS NULL OR geolocation = ANY($4::text[]) OR split_part(geolocation, ', ', 2) = ANY($4::text[]))
        ORDER BY (ask->>'priceGpu')::float8, machine_id LIMIT $3`,
      [criteria.gpuNames, criteria.numGpus, criteria.limit, criteria.geolocations],
    );
    let lastRefusal: ApiError | DomainError | null = null;
    for (const { machine_id } of rows) {
      const offerId = Number(machine_id) * 1000 + criteria.numGpus;
      try {
        const created = await this.commands.execute(
          new CreateInstanceCommand(renter, offerId, request, metadata),
        );
        return { ...created, offerId };
      } catch (error) {
        if (isRefusal(error) && (error.code === 'offer_unavailable' || error.code === 'no_such_offer')) {
          lastRefusal = error;
          continue;
        }
        throw error;
      }
    }
    throw new ApiError(
      409,
      'no_offer_available',
      `No ${criteria.numGpus}x ${criteria.gpuNames.join(' or ')} offer can be rented right now${lastRefusal ? ` (the last one tried: ${lastRefusal.message})` : ''}; search offers and try again`,
    );
  }
}
