import type { DomainEvent } from '@rigmarket/contracts';
import { ManualClock } from './clock';
import { CommandRunner } from './command-runner';
import { Database } from './database';
import { EventStore } from './event-store';
import { eventChainMigration } from './event-chain';
import { eventStoreMigration, runMigrations, snapshotsMigration } from './migrations';

type Noted = DomainEvent<'Noted', { text: string; at: string }>;
type Note = { type: 'Note'; text: string; at: string };
const notes = {
  initialState: (): string[] => [],
  evolve: (state: string[], event: Noted) => [...state, event.data.text],
  decide: (command: Note, state: string[]): Noted[] =>
    state.includes(command.text) ? [] : [{ type: 'Noted', data: { text: command.text, at: command.at } }],
};

describe('CommandRunner.run', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, 'identity', [eventStoreMigration, snapshotsMigration, eventChainMigration]);
  });
  afterAll(async () => {
    await db.close();
  });

  it("stamps the command's time from the runner's clock and hands the state before the events to alsoInTransaction", async () => {
    const clock = new ManualClock('2026-05-01T12:00:00.000Z');
    const runner = new CommandRunner(db, new EventStore('identity', 'identity'), [], clock);
    await runner.run('note-1', notes, { type: 'Note', text: 'a' }, { correlationId: 'c', causationId: 'c' });
    clock.advance(60_000);
    const seen: string[][] = [];
    const result = await runner.run(
      'note-1',
      notes,
      { type: 'Note', text: 'b' },
      { correlationId: 'c', causationId: 'c' },
      { alsoInTransaction: async (_sql, _events, before) => void seen.push(before) },
    );
    expect(result.events.map((e) => e.data)).toEqual([{ text: 'b', at: '2026-05-01T12:01:00.000Z' }]);
    expect(result.state).toEqual(['a', 'b']);
    expect(seen).toEqual([['a']]);
  });

  it('newStream: a command on a new stream reads nothing; on a stream that had events it decides again on them', async () => {
    const clock = new ManualClock('2026-05-01T12:00:00.000Z');
    const store = new EventStore('identity', 'identity');
    const reads = jest.spyOn(store, 'readStream');
    const runner = new CommandRunner(db, store, [], clock);
    const meta = { correlationId: 'c', causationId: 'c' };
    const fresh = await runner.run('note-2', notes, { type: 'Note', text: 'a' }, meta, { newStream: true });
    expect(fresh).toMatchObject({ state: ['a'], version: 1, eventsRead: 0 });
    expect(reads).not.toHaveBeenCalled();
    // Not new after all: the first attempt's append (at version 0) fails, the next reads and decides on 'a'.
    const again = await runner.run('note-2', notes, { type: 'Note', text: 'b' }, meta, { newStream: true });
    expect(again).toMatchObject({ state: ['a', 'b'], version: 2, eventsRead: 1 });
    expect(reads).toHaveBeenCalledTimes(1);
    const refused = await runner.run('note-2', notes, { type: 'Note', text: 'a' }, meta, { newStream: true });
    expect(refused.events).toEqual([]);
    expect((await runner.load('note-2', notes)).state).toEqual(['a', 'b']);
  });
});
