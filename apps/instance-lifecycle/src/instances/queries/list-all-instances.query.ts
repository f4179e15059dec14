import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { INSTANCE_MACHINE_COLUMNS } from '../../read-models/market-machines/queries';
import { SCHEMA } from '../../schema';
import { withSyncAndMaintenance } from '../sync-maintenance-notices';
import { parseListQuery } from './instance-list';
import { type InstanceRowRecord, type InstanceView, instanceView } from './instance-view';

/** The most instances one GET /api/v0/instances/ lists (far above the per-account quota). */
export const MAX_LISTED_INSTANCES = 10_000;

/**
 * `GET /api/v0/instances/` (the CLI's `show instances`): every live instance of the owner in one query, in
 * the v1 listing's default order, instead of paging through it 25 at a time (each page three more queries).
 */
export class ListAllInstancesQuery extends Query<InstanceView[]> {
  constructor(readonly ownerId: number) {
    super();
  }
}

@QueryHandler(ListAllInstancesQuery)
export class ListAllInstancesHandler implements IQueryHandler<ListAllInstancesQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId }: ListAllInstancesQuery): Promise<InstanceView[]> {
    const q = parseListQuery({}, ownerId);
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE ${q.where.join(' AND ')} ORDER BY ${q.orderBy} LIMIT ${MAX_LISTED_INSTANCES}`,
      q.params,
    );
    return withSyncAndMaintenance(this.runtime.db, rows.map(instanceView), this.runtime.infra.clock.now());
  }
}
