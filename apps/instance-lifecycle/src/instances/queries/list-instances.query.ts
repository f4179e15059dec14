import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { INSTANCE_MACHINE_COLUMNS } from '../../read-models/market-machines/queries';
import { SCHEMA } from '../../schema';
import { withSyncAndMaintenance } from '../sync-maintenance-notices';
import { encodeToken, parseListQuery } from './instance-list';
import { type InstanceRowRecord, type InstanceView, instanceView } from './instance-view';

export interface InstancePage {
  instances: InstanceView[];
  next_token: string | null;
  total_instances: number;
  label_counts: Record<string, number>;
}

/** `GET /api/v1/instances/`: one page of the owner's instances, filtered and ordered (instance-list.ts). */
export class ListInstancesQuery extends Query<InstancePage> {
  constructor(
    readonly ownerId: number,
    readonly query: Record<string, unknown>,
  ) {
    super();
  }
}

@QueryHandler(ListInstancesQuery)
export class ListInstancesHandler implements IQueryHandler<ListInstancesQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId, query }: ListInstancesQuery): Promise<InstancePage> {
    const q = parseListQuery(query, ownerId);
    const where = q.where.join(' AND ');
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE ${where} ORDER BY ${q.orderBy} LIMIT ${q.limit + 1} OFFSET ${q.offset}`,
      q.params,
    );
    const [{ n }] = (await this.runtime.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${SCHEMA}.instances WHERE ${where}`,
      q.params,
    )) as [{ n: string }];
    const labels = await this.runtime.db.query<{ label: string; n: string }>(
      `SELECT label, count(*)::text AS n FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed AND label IS NOT NULL GROUP BY label`,
      [ownerId],
    );
    const page = rows.slice(0, q.limit);
    return {
      instances: await withSyncAndMaintenance(
        this.runtime.db,
        page.map(instanceView),
        this.runtime.infra.clock.now(),
      ),
      next_token: rows.length > q.limit ? encodeToken(q.offset + q.limit) : null,
      total_instances: Number(n),
      label_counts: Object.fromEntries(labels.map((l) => [l.label, Number(l.n)])),
    };
  }
}
