import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { EventEnvelope } from '@rigmarket/contracts';
import { type ContextRuntime, ownedStreamAsOf } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { instanceDecider } from '../instance.decider';
import type { InstanceState } from '../instance.state';

export interface InstanceHistory {
  /** The instance's events up to the moment asked (all of them without one). */
  events: EventEnvelope[];
  /** The instance as those events made it. */
  state: InstanceState;
}

/**
 * An instance of its renter as its own events tell it (destroyed ones too): for `GET
 * /instances/{id}/history/` and `?as_of=`. Null when the caller never rented it, so another account's
 * instance looks like one that does not exist.
 */
export class InstanceHistoryQuery extends Query<InstanceHistory | null> {
  constructor(
    readonly ownerId: number,
    readonly instanceId: number,
    readonly untilMs?: number,
  ) {
    super();
  }
}

@QueryHandler(InstanceHistoryQuery)
export class InstanceHistoryHandler implements IQueryHandler<InstanceHistoryQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  execute({ ownerId, instanceId, untilMs }: InstanceHistoryQuery): Promise<InstanceHistory | null> {
    return ownedStreamAsOf(
      this.runtime,
      `instance-${instanceId}`,
      instanceDecider,
      (state) => state.status !== 'none' && state.renter === ownerId,
      untilMs,
    );
  }
}
