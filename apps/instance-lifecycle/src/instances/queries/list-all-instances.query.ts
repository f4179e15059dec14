import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { parseListQuery } from './instance-list';
import { readInstanceViews } from './instance-rows';
import type { InstanceView } from './instance-view';

/** The most instances one GET /api/v0/instances/ lists (far above the per-account quota). */
export const MAX_LISTED_INSTANCES = 10_000;

/**
 * `GET /api/v0/instances/` (the CLI's `show instances`): every live instance of the owner, in the v1
 * listing's default order, in one query with its machines, maintenance windows and syncs (instance-rows.ts).
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
    const { views } = await readInstanceViews(
      this.runtime.db,
      { where: q.where.join(' AND '), params: q.params, orderBy: q.orderBy, limit: MAX_LISTED_INSTANCES },
      this.runtime.infra.clock.now(),
    );
    return views;
  }
}
