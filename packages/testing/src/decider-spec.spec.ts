import type { DomainEvent } from '@rigmarket/contracts';
import { deciderSpec } from './decider-spec';

type Added = DomainEvent<'Added', { name: string }>;
type Add = { type: 'Add'; name: string };

/** Refuses a name twice; its state is a Set, which JSON does not carry. */
const withSet = {
  initialState: () => new Set<string>(),
  evolve: (state: Set<string>, event: Added) => new Set([...state, event.data.name]),
  decide: (command: Add, state: Set<string>): Added[] => {
    if (state.has(command.name)) throw Object.assign(new Error('taken'), { code: 'taken' });
    return [{ type: 'Added', data: { name: command.name } }];
  },
};
const added = (name: string): Added => ({ type: 'Added', data: { name } });

describe('deciderSpec', () => {
  it('checks a snapshotted decider from its state read back from JSON as well', () => {
    // Without a snapshot policy the Set is fine...
    deciderSpec(withSet)
      .given([added('a')])
      .when({ type: 'Add', name: 'a' })
      .thenThrows('taken');
    // ...with one, the state read back from a snapshot has lost its names, and the spec says so.
    const snapshotted = deciderSpec({ ...withSet, snapshot: { version: 1, every: 10 } });
    expect(() =>
      snapshotted
        .given([added('a')])
        .when({ type: 'Add', name: 'a' })
        .thenThrows('taken'),
    ).toThrow();
  });
});
