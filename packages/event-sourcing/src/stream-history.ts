import type { DomainEvent, EventEnvelope } from '@rigmarket/contracts';
import type { ContextRuntime } from './context-runtime';
import { type Decider, fold } from './decider';

/**
 * A stream's events as stored (upcast to today's payloads), oldest first; with `untilMs`, only those that
 * had happened by then. For object history and as-of reads: the events themselves, no read model.
 */
export async function streamEvents(
  runtime: ContextRuntime,
  streamId: string,
  untilMs?: number,
): Promise<EventEnvelope[]> {
  const events = await runtime.store.readStream(runtime.db, streamId);
  return untilMs === undefined ? events : events.filter((e) => Date.parse(e.occurredAt) <= untilMs);
}

/** The aggregate's state after `events`, as its decider folds it. */
export function foldEnvelopes<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  events: readonly EventEnvelope[],
): State {
  return fold(
    decider,
    events.map((e) => ({ type: e.type, data: e.data }) as Event),
  );
}

/**
 * An object's events and folded state up to `untilMs` (all of them without it), or null when the object does
 * not exist or `ownedBy` says the caller may not see it (judged on the object as it is now): one answer for
 * "never existed" and "someone else's", so ids reveal nothing.
 */
export async function ownedStreamAsOf<State, Event extends DomainEvent>(
  runtime: ContextRuntime,
  streamId: string,
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  ownedBy: (state: State) => boolean,
  untilMs?: number,
): Promise<{ events: EventEnvelope[]; state: State } | null> {
  const all = await streamEvents(runtime, streamId);
  if (all.length === 0) return null;
  const now = foldEnvelopes(decider, all);
  if (!ownedBy(now)) return null;
  if (untilMs === undefined) return { events: all, state: now };
  const events = all.filter((e) => Date.parse(e.occurredAt) <= untilMs);
  return { events, state: foldEnvelopes(decider, events) };
}
