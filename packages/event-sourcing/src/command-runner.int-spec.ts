import type { DomainEvent } from '@rigmarket/contracts';
import { ManualClock } from './clock';
import { type CommandBody, CommandRunner } from './command-runner';
import { Database } from './database';
import { EventStore, WrongExpectedVersion } from './event-store';
import { eventChainMigration, verifyChain } from './event-chain';
import { databaseStatements } from './metrics';
import { eventStoreMigration, runMigrations, snapshotsMigration } from './migrations';

const AT = '2026-05-01T12:00:00.000Z';
type Noted = DomainEvent<'Noted', { text: string; at: string }>;
type Note = { type: 'Note'; text: string; at: string };
const notes = {
  initialState: (): string[] => [],
  evolve: (state: string[], event: Noted) => [...state, event.data.text],
  decide: (command: Note, state: string[]): Noted[] =>
    state.includes(command.text) ? [] : [{ type: 'Noted', data: { text: command.text, at: command.at } }],
};

/** An in-memory database with identity's event store, snapshots and event chain. */
const identityDatabase = async (): Promise<Database> => {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  await runMigrations(db, 'identity', [eventStoreMigration, snapshotsMigration, eventChainMigration]);
  return db;
};

describe('CommandRunner.run', () => {
  let db: Database;
  beforeAll(async () => {
    db = await identityDatabase();
  });
  afterAll(() => db.close());

  it("stamps the command's time from the runner's clock and hands the state before the events to alsoInTransaction", async () => {
    const clock = new ManualClock(AT);
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
    const clock = new ManualClock(AT);
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

describe('CommandRunner.run with events alongside on another stream', () => {
  let db: Database;
  const meta = { correlationId: 'c', causationId: 'c' };
  const noted = (text: string): Noted[] => [{ type: 'Noted', data: { text, at: AT } }];
  /** A runner on identity's store (or `store`), its clock stopped at AT. */
  const newRunner = (store = new EventStore('identity', 'identity')) =>
    new CommandRunner(db, store, [], new ManualClock(AT));
  const statements = async () => (await databaseStatements.get()).values[0]?.value ?? 0;
  /** Each stream's events as stored: [stream, position, text], in global position order. */
  const stored = async (...streams: string[]) =>
    (
      await db.query<{ stream_id: string; stream_position: number; data: { text: string } }>(
        `SELECT stream_id, stream_position, data FROM identity.events WHERE stream_id = ANY($1) ORDER BY global_position`,
        [streams],
      )
    ).map((r) => [r.stream_id, Number(r.stream_position), r.data.text]);

  beforeAll(async () => {
    db = await identityDatabase();
  });
  afterAll(() => db.close());

  it("given a command and another stream's events, when it runs, then both streams get their events in the command's statements, the command's first, on one chain", async () => {
    const store = new EventStore('identity', 'identity');
    const runner = newRunner(store);
    await runner.run('side-1', notes, { type: 'Note', text: 'before' }, meta);
    // As many statements as the same command without the other stream's events.
    let at = await statements();
    await runner.run('plain-1', notes, { type: 'Note', text: 'a' }, meta);
    const alone = (await statements()) - at;
    at = await statements();

    const result = await runner.run('main-1', notes, { type: 'Note', text: 'a' }, meta, {
      alongside: async () => [{ streamId: 'side-1', expectedVersion: 1, events: noted('step') }],
    });

    expect((await statements()) - at).toBe(alone);
    expect(result).toMatchObject({ state: ['a'], version: 1 });
    expect(result.events.map((e) => [e.streamId, e.streamPosition])).toEqual([['main-1', 1]]);
    expect(await stored('main-1', 'side-1')).toEqual([
      ['side-1', 1, 'before'],
      ['main-1', 1, 'a'],
      ['side-1', 2, 'step'],
    ]);
    expect((await db.transaction((sql) => verifyChain(sql, 'identity'))).broken).toBeUndefined();
  });

  it('given the other stream moved since its events were decided, when the command runs, then neither stream keeps the first attempt and the retry appends both once', async () => {
    const runner = newRunner();
    await runner.run('side-2', notes, { type: 'Note', text: 'moved' }, meta);
    const versions: number[] = [];

    await runner.run('main-2', notes, { type: 'Note', text: 'a' }, meta, {
      // The first attempt decides on a stale version (0); the retry reads the stream's (1).
      alongside: async (sql) => {
        const version =
          versions.length === 0
            ? 0
            : (await new EventStore('identity', 'identity').readStream(sql, 'side-2')).length;
        versions.push(version);
        return [{ streamId: 'side-2', expectedVersion: version, events: noted('step') }];
      },
    });

    expect(versions).toEqual([0, 1]);
    expect(await stored('main-2', 'side-2')).toEqual([
      ['side-2', 1, 'moved'],
      ['main-2', 1, 'a'],
      ['side-2', 2, 'step'],
    ]);
  });

  it("given the command's own stream moved, when its append conflicts, then the other stream's events are not written either", async () => {
    const runner = newRunner();
    await runner.run('main-3', notes, { type: 'Note', text: 'there' }, meta);
    const command: CommandBody<Note> = { type: 'Note', text: 'a' };

    // newStream on a stream that is not new: the only attempt appends at version 0 and conflicts.
    const run = runner.run('main-3', notes, command, meta, {
      newStream: true,
      maxAttempts: 1,
      alongside: async () => [{ streamId: 'side-3', expectedVersion: 0, events: noted('step') }],
    });

    await expect(run).rejects.toBeInstanceOf(WrongExpectedVersion);
    await expect(run).rejects.toMatchObject({ streamId: 'main-3' });
    expect(await stored('main-3', 'side-3')).toEqual([['main-3', 1, 'there']]);
  });
});
