import type { DomainEvent } from '@rigmarket/contracts';

interface DeciderLike<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

/**
 * given(events).when(command).then(events) for pure deciders (after emmett's DeciderSpecification).
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(
  decider: DeciderLike<State, Command, Event>,
) {
  return {
    given(events: Event[] = []) {
      return {
        when(command: Command) {
          const run = () => decider.decide(command, events.reduce(decider.evolve, decider.initialState()));
          return {
            then(expected: Event[]) {
              expect(run()).toEqual(expected);
            },
            thenNothingHappened() {
              expect(run()).toEqual([]);
            },
            thenThrows(code: string) {
              let thrown: unknown;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown).toBeDefined();
              expect((thrown as { code?: string }).code).toBe(code);
            },
          };
        },
      };
    },
  };
}
