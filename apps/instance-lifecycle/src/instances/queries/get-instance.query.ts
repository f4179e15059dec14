import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { readInstanceViews } from './instance-rows';
import type { InstanceView } from './instance-view';

/** One live instance of its owner, or null. */
export class GetInstanceQuery extends Query<InstanceView | null> {
  constructor(
    readonly ownerId: number,
    readonly instanceId: number,
  ) {
    super();
  }
}

@QueryHandler(GetInstanceQuery)
export class GetInstanceHandler implements IQueryHandler<GetInstanceQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId, instanceId }: GetInstanceQuery): Promise<InstanceView | null> {
    const { views } = await readInstanceViews(
      this.runtime.db,
      {
        where: 'instance_id = $1 AND owner_id = $2 AND NOT destroyed',
        params: [instanceId, ownerId],
        orderBy: 'instance_id',
        limit: 1,
      },
      this.runtime.infra.clock.now(),
    );
    return views[0] ?? null;
  }
}
