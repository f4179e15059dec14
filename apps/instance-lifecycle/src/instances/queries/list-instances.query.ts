import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { SCHEMA } from '../../schema';
import { encodeToken, keysetAfter, parseListQuery } from './instance-list';
import { readInstanceViews } from './instance-rows';
import type { InstanceView } from './instance-view';

export interface InstancePage {
  instances: InstanceView[];
  next_token: string | null;
  total_instances: number;
  label_counts: Record<string, number>;
}

/**
 * `GET /api/v1/instances/`: one page of the owner's instances, filtered and ordered (instance-list.ts), in
 * two queries whatever the page: the page with everything its rows show (instance-rows.ts), found after the
 * previous page's last row (keyset), and the counts.
 */
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
    const pageParams = [...q.params];
    const pageWhere = q.after === null ? where : `${where} AND ${keysetAfter(q.keys, q.after, pageParams)}`;
    const { rows, views } = await readInstanceViews(
      this.runtime.db,
      { where: pageWhere, params: pageParams, orderBy: q.orderBy, limit: q.limit + 1, offset: q.offset },
      this.runtime.infra.clock.now(),
    );
    const [counts] = (await this.runtime.db.query<{
      n: string;
      labels: Record<string, string> | string | null;
    }>(
      `SELECT (SELECT count(*) FROM ${SCHEMA}.instances WHERE ${where})::text AS n,
              (SELECT json_object_agg(label, n) FROM (
                 SELECT label, count(*)::text AS n FROM ${SCHEMA}.instances
                  WHERE owner_id = $1 AND NOT destroyed AND label IS NOT NULL GROUP BY label) l) AS labels`,
      q.params,
    )) as [{ n: string; labels: Record<string, string> | string | null }];
    const labels =
      typeof counts.labels === 'string'
        ? (JSON.parse(counts.labels) as Record<string, string>)
        : counts.labels;
    const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
    return {
      instances: views.slice(0, q.limit),
      next_token: last ? encodeToken(q.keys, last) : null,
      total_instances: Number(counts.n),
      label_counts: Object.fromEntries(Object.entries(labels ?? {}).map(([label, n]) => [label, Number(n)])),
    };
  }
}
