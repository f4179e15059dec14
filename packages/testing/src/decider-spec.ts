import type { DomainEvent } from '@rigmarket/contracts';

interface DeciderLike<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /** A decider whose streams are snapshotted: its folded state is stored as JSON and read back. */
  snapshot?: { version: number; every: number };
}

/**
 * given(events).when(command).then(events) for pure deciders (after emmett's DeciderSpecification).
 * For a decider with a snapshot policy every expectation is also checked from the folded state written
 * as JSON and read back (what a command starting from a snapshot sees), so a state that JSON cannot carry
 * (a Map, a Date, undefined where null is meant) fails the decider's own tests.
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(
  decider: DeciderLike<State, Command, Event>,
) {
  const outcome = (run: () => Event[]): { events: Event[] } | { code: string | undefined } => {
    try {
      return { events: run() };
    } catch (error) {
      return { code: (error as { code?: string }).code };
    }
  };
  return {
    given(events: Event[] = []) {
      const fold = () => events.reduce(decider.evolve, decider.initialState());
      return {
        when(command: Command) {
          const run = () => decider.decide(command, fold());
          const fromSnapshot = () => decider.decide(command, JSON.parse(JSON.stringify(fold())) as State);
          const sameFromSnapshot = () => {
            if (decider.snapshot) expect(outcome(fromSnapshot)).toEqual(outcome(run));
          };
          return {
            then(expected: Event[]) {
              expect(run()).toEqual(expected);
              sameFromSnapshot();
            },
            thenNothingHappened() {
              expect(run()).toEqual([]);
              sameFromSnapshot();
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
              sameFromSnapshot();
            },
          };
        },
      };
    },
  };
}
