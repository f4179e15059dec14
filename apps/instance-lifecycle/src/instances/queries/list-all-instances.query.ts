import { Inject, type Provider } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { instanceSyncsProjection } from '../../read-models/instance-syncs/projection';
import { instancesProjection } from '../../read-models/instances/projection';
import { machineMaintenanceProjection } from '../../read-models/machine-maintenance/projection';
import { marketMachinesProjection } from '../../read-models/market-machines/projection';
import { parseListQuery } from './instance-list';
import { readInstanceViews } from './instance-rows';
import { type PollAnswer, PollAnswerCache, answerLapsesAt, pollAnswer } from './poll-answer-cache';

/** The most instances one GET /api/v0/instances/ lists (far above the per-account quota). */
export const MAX_LISTED_INSTANCES = 10_000;

/** The read models the listing reads (instance-rows.ts): any change to them drops the cached answers. */
export const LISTING_READ_MODELS = [
  instancesProjection,
  marketMachinesProjection,
  machineMaintenanceProjection,
  instanceSyncsProjection,
].flatMap((p) => p.tables);

/**
 * `GET /api/v0/instances/` (the CLI's `show instances`, which renters poll): every live instance of the
 * owner, in the v1 listing's default order, in one query with its machines, maintenance windows and syncs
 * (instance-rows.ts). The result is the whole answer, ready to send (its JSON bytes and ETag), kept per owner
 * until the read models change or something it shows lapses (poll-answer-cache.ts).
 */
export class ListAllInstancesQuery extends Query<PollAnswer> {
  constructor(readonly ownerId: number) {
    super();
  }
}

/** The context's one poll cache: this handler fills it, and the poll's fast path (cached-poll.middleware.ts) reads it. */
export const POLL_ANSWER_CACHE: Provider = {
  provide: PollAnswerCache,
  inject: [INSTANCE_RUNTIME],
  useFactory: (runtime: ContextRuntime) =>
    new PollAnswerCache(runtime.db.watchReadModels(LISTING_READ_MODELS)),
};

@QueryHandler(ListAllInstancesQuery)
export class ListAllInstancesHandler implements IQueryHandler<ListAllInstancesQuery> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(PollAnswerCache) private readonly cache: PollAnswerCache,
  ) {}

  async execute({ ownerId }: ListAllInstancesQuery): Promise<PollAnswer> {
    const now = this.runtime.infra.clock.now();
    const cached = this.cache.get(ownerId, now.getTime());
    if (cached !== undefined) return cached;
    const mark = this.cache.mark();
    const q = parseListQuery({}, ownerId);
    const { rows, views } = await readInstanceViews(
      this.runtime.db,
      { where: q.where.join(' AND '), params: q.params, orderBy: q.orderBy, limit: MAX_LISTED_INSTANCES },
      now,
    );
    const answer = pollAnswer(
      JSON.stringify({ success: true, instances_found: views.length, instances: views }),
    );
    this.cache.store(ownerId, answer, answerLapsesAt(rows, now.getTime()), mark);
    return answer;
  }
}
