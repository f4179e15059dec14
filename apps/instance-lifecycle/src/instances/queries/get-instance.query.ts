import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { INSTANCE_MACHINE_COLUMNS } from '../../read-models/market-machines/queries';
import { SCHEMA } from '../../schema';
import { withSyncAndMaintenance } from '../sync-maintenance-notices';
import { type InstanceRowRecord, type InstanceView, instanceView } from './instance-view';

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
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE instance_id = $1 AND owner_id = $2 AND NOT destroyed`,
      [instanceId, ownerId],
    );
    return rows[0]
      ? ((
          await withSyncAndMaintenance(
            this.runtime.db,
            [instanceView(rows[0])],
            this.runtime.infra.clock.now(),
          )
        )[0] ?? null)
      : null;
  }
}
