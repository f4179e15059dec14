import type { DomainEvent } from '@rigmarket/contracts';

/**
 * An aggregate as plain data and pure functions (emmett's Decider): no I/O, no clock, no ids made here;
 * time and ids arrive on the command.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the new events, or throws a DomainError (a code; the HTTP edge gives it a status). */
  decide(command: Command, state: State): Event[];
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  events: readonly Event[],
): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}
