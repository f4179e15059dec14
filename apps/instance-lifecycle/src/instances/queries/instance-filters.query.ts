import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { INSTANCE_VERIFICATION } from '../../read-models/market-machines/queries';
import { SCHEMA } from '../../schema';

export interface InstanceFilterValues {
  actual_status: string | null;
  verification: string;
  gpu_name: string;
}

/** `show instances` (table mode): the distinct values its --status, --verification and --gpu-name filters can take. */
export class InstanceFiltersQuery extends Query<InstanceFilterValues[]> {
  constructor(readonly ownerId: number) {
    super();
  }
}

@QueryHandler(InstanceFiltersQuery)
export class InstanceFiltersHandler implements IQueryHandler<InstanceFiltersQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId }: InstanceFiltersQuery): Promise<InstanceFilterValues[]> {
    return this.runtime.db.query<InstanceFilterValues>(
      `SELECT DISTINCT actual_status, ${INSTANCE_VERIFICATION} AS verification, gpu_name FROM ${SCHEMA}.instances
        WHERE owner_id = $1 AND NOT destroyed ORDER BY 1, 2, 3`,
      [ownerId],
    );
  }
}
