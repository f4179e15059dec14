import {
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  isPublicEvent,
  streamTypeOf,
} from '@rigmarket/contracts';
import type { Clock } from './clock';
import type { Database, Sql } from './database';
import { type EventStore, type StreamAppend, WrongExpectedVersion } from './event-store';
import { eventsAppended } from './metrics';
import { inSpan } from './tracing';
import { type Projection, appendAndProject } from './projections';

export interface Evolver<State, Event extends DomainEvent> {
  initialState(): State;
  /**
   * May update `state` in place and return it: the runner folds into a state it owns (fresh from
   * initialState or parsed from a snapshot) and never reuses an earlier one.
   */
  evolve(state: State, event: Event): State;
  /** Snapshot the folded state (JSON data only), so that a command folds at most `every` events. */
  snapshot?: SnapshotPolicy;
}

export interface SnapshotPolicy {
  /** The state's shape: bump it when the state or evolve changes, and older snapshots are ignored. */
  version: number;
  /** Write a snapshot when a command folded this many events or more since the last one. */
  every: number;
}

export interface CommandResult<State, Event extends DomainEvent = DomainEvent> {
  events: EventEnvelope[];
  /** The same events as the decider returned them (typed; the envelopes carry ids and positions). */
  decided: Event[];
  /** State after the new events. */
  state: State;
  version: number;
  /** Events read from the store and folded (after the snapshot, when there was one). */
  eventsRead: number;
}

/** A stream as a fold left it: its state, its version, and where the fold started. */
export interface Folded<State> {
  state: State;
  version: number;
  eventsRead: number;
  /** The version of the snapshot the fold started from (0: none). */
  snapshotVersion: number;
}

/** A command as callers give it: the decider's command without `at`, which the runner stamps from its clock. */
export type CommandBody<Command extends { at: string }> = Command extends unknown
  ? Omit<Command, 'at'>
  : never;

/** An evolver with the decide of commands that carry their time (`at`). */
export interface TimedDecider<
  State,
  Command extends { at: string },
  Event extends DomainEvent,
> extends Evolver<State, Event> {
  decide(command: Command, state: State): Event[];
}

export interface HandleOptions<State = unknown, Event extends DomainEvent = DomainEvent> {
  /**
   * Extra writes in the same transaction (e.g. an idempotency record), given the state before the events
   * and the events as the decider returned them.
   */
  alsoInTransaction?: (
    sql: Sql,
    events: EventEnvelope[],
    stateBefore: State,
    decided: Event[],
  ) => Promise<void>;
  /**
   * Other streams' events appended in the same statement as the command's (e.g. a workflow's step recorded
   * with the step's outcome), decided in the transaction once the command's events are: one INSERT for all
   * of them. A version conflict on any stream writes none of them and the whole command runs again (a
   * retry's callback must read what it decides on). Called again on every attempt, with the attempt's time
   * (the command's events carry it: the other streams' events take it too).
   */
  alongside?: (sql: Sql, decided: Event[], now: Date) => Promise<readonly StreamAppend[]>;
  maxAttempts?: number;
  /**
   * Whether the command returns only once its public events were handed to the transport (default true:
   * in embedded mode the other contexts' read models then already show them). False for a caller whose
   * answer needs only its own context's read models (kept inline, in the command's transaction): the relay
   * still publishes at once, in the background, and a relay that fails leaves the rows for its next poll.
   */
  awaitPublication?: boolean;
  /**
   * The stream is new: its id was just drawn (e.g. from a sequence) and nothing else knows it yet. The first
   * attempt then folds the initial state without reading the stream; were it not empty after all, the
   * append (expected version 0) fails on the stream's positions and the next attempt reads it.
   */
  newStream?: boolean;
}

/**
 * PostgreSQL aborted the transaction because it waited in a cycle with another (40P01: a deadlock, e.g. two
 * appends that lock rows and the context's event chain head in opposite orders) or could not serialise it
 * (40001). Nothing of it was written: the whole command can simply run again.
 */
export function transientConflict(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return code === '40P01' || code === '40001';
}

/**
 * Runs one command against one stream in one transaction: read, fold, decide (pure), append with the
 * expected version, write the outbox, apply the context's own (inline) projections so the caller can
 * read its writes at once. A version conflict (or a deadlock PostgreSQL broke) re-reads and decides again,
 * a few times with backoff.
 * After commit it hands the new events to the relay and tells the context's CommitSignal.
 */
export class CommandRunner {
  constructor(
    private readonly db: Database,
    readonly store: EventStore,
    private readonly inlineProjections: readonly Projection[],
    readonly clock: Clock,
    private readonly afterCommit: () => Promise<unknown> = async () => undefined,
    /** Called after every commit that appended events, private ones too (live streams wake on it). */
    private readonly committed: () => void = () => undefined,
  ) {}

  handle<State, Event extends DomainEvent>(
    streamId: string,
    evolver: Evolver<State, Event>,
    /**
     * Pure, given the state; `sql` is the command's transaction, for a look-up whose answer goes into the
     * decision (e.g. whether a charge was already earned).
     */
    decide: (state: State, now: Date, sql: Sql) => Event[] | Promise<Event[]>,
    metadata: EventMetadata,
    options: HandleOptions<State, Event> = {},
  ): Promise<CommandResult<State, Event>> {
    // A span per command while tracing is on (its events' outbox rows carry its context).
    return inSpan(
      `command ${streamTypeOf(streamId)}`,
      { attributes: { 'rigmarket.context': this.store.context, 'rigmarket.stream.id': streamId } },
      () => this.handleUntraced(streamId, evolver, decide, metadata, options),
    );
  }

  private async handleUntraced<State, Event extends DomainEvent>(
    streamId: string,
    evolver: Evolver<State, Event>,
    decide: (state: State, now: Date, sql: Sql) => Event[] | Promise<Event[]>,
    metadata: EventMetadata,
    options: HandleOptions<State, Event>,
  ): Promise<CommandResult<State, Event>> {
    const maxAttempts = options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const outcome = await this.db.transaction(async (sql) => {
          const folded =
            options.newStream && attempt === 1
              ? { state: evolver.initialState(), version: 0, eventsRead: 0, snapshotVersion: 0 }
              : await this.foldIn(sql, streamId, evolver);
          let state = folded.state;
          const { version, eventsRead } = folded;
          const now = this.clock.now();
          const events = await decide(state, now, sql);
          if (events.length === 0) {
            await this.snapshotIfDue(sql, streamId, evolver, folded, state, version);
            return { result: { events: [], decided: [], state, version, eventsRead }, appended: [] };
          }
          // The append's statement moves every read model's positions too, then each takes the command's
          // events as one batch (a fixed number of statements whatever their count, with applyBatch).
          const alongside = (await options.alongside?.(sql, events, now)) ?? [];
          const appended = await appendAndProject(
            sql,
            this.store,
            this.inlineProjections,
            { streamId, expectedVersion: version, events, metadata, occurredAt: now },
            alongside,
          );
          // The command's own stream's envelopes come first.
          const envelopes = appended.slice(0, events.length);
          await options.alsoInTransaction?.(sql, envelopes, folded.state, events);
          state = events.reduce((s, e) => evolver.evolve(s, e), state);
          await this.snapshotIfDue(sql, streamId, evolver, folded, state, version + events.length);
          return {
            result: {
              events: envelopes,
              decided: events,
              state,
              version: version + events.length,
              eventsRead,
            },
            appended,
          };
        });
        const { result, appended } = outcome;
        if (appended.length > 0) {
          for (const e of appended)
            eventsAppended.inc({ context: this.store.context, stream_type: e.streamType });
          this.committed();
        }
        // Private events never reach the outbox: nothing to publish then.
        if (appended.some((e) => isPublicEvent(this.store.context, e.type))) {
          const published = this.afterCommit().catch(() => undefined);
          if (options.awaitPublication !== false) await published;
        }
        return result;
      } catch (error) {
        if ((error instanceof WrongExpectedVersion || transientConflict(error)) && attempt < maxAttempts) {
          await new Promise((r) => setTimeout(r, 5 * 2 ** attempt + Math.random() * 10));
          continue;
        }
        throw error;
      }
    }
  }

  /**
   * handle() for a decider whose commands carry their time: stamps `at` with the clock's time of the attempt
   * (an ISO string) and decides. `command` may be computed in the transaction (a look-up that goes into it).
   */
  run<State, Command extends { at: string }, Event extends DomainEvent>(
    streamId: string,
    decider: TimedDecider<State, Command, Event>,
    command: CommandBody<Command> | ((sql: Sql) => Promise<CommandBody<Command>>),
    metadata: EventMetadata,
    options: HandleOptions<State, Event> = {},
  ): Promise<CommandResult<State, Event>> {
    return this.handle(
      streamId,
      decider,
      async (state, now, sql) => {
        const body = typeof command === 'function' ? await command(sql) : command;
        return decider.decide({ ...body, at: now.toISOString() } as unknown as Command, state);
      },
      metadata,
      options,
    );
  }

  /** Reads a stream's current state without deciding anything. */
  async load<State, Event extends DomainEvent>(
    streamId: string,
    evolver: Evolver<State, Event>,
  ): Promise<{ state: State; version: number; eventsRead: number }> {
    const { state, version, eventsRead } = await this.db.transaction((sql) =>
      this.foldIn(sql, streamId, evolver),
    );
    return { state, version, eventsRead };
  }

  /**
   * The stream's state: its snapshot (if any, of the evolver's shape) plus the events after it, read in a
   * transaction the caller holds (a command that decides on a second stream in its own transaction).
   */
  async foldIn<State, Event extends DomainEvent>(
    sql: Sql,
    streamId: string,
    evolver: Evolver<State, Event>,
  ): Promise<Folded<State>> {
    let state: State | undefined;
    let from = 0;
    let history: EventEnvelope[];
    if (evolver.snapshot) {
      // The snapshot and the events after it in one statement.
      const read = await this.store.readStreamFromSnapshot(sql, streamId, evolver.snapshot.version);
      if (read.snapshot) {
        state = read.snapshot.state as State;
        from = read.snapshot.version;
      }
      history = read.events;
    } else history = await this.store.readStream(sql, streamId);
    let folded = state ?? evolver.initialState();
    for (const e of history) folded = evolver.evolve(folded, { type: e.type, data: e.data } as Event);
    return {
      state: folded,
      version: from + history.length,
      eventsRead: history.length,
      snapshotVersion: from,
    };
  }

  /**
   * Writes the state as the stream's snapshot, in the command's transaction, once enough events piled up
   * since the fold's snapshot (`version`: the stream's version with the command's events, appended in the
   * same transaction).
   */
  async snapshotIfDue<State, Event extends DomainEvent>(
    sql: Sql,
    streamId: string,
    evolver: Evolver<State, Event>,
    folded: Folded<State>,
    state: State,
    version: number,
  ): Promise<void> {
    const policy = evolver.snapshot;
    if (!policy || version - folded.snapshotVersion < policy.every) return;
    await sql.execute(
      `INSERT INTO ${this.store.schema}.snapshots (stream_id, version, state_version, state) VALUES ($1, $2, $3, $4)
       ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version, state_version = EXCLUDED.state_version,
         state = EXCLUDED.state, taken_at = now()
       WHERE ${this.store.schema}.snapshots.version < EXCLUDED.version
          OR ${this.store.schema}.snapshots.state_version <> EXCLUDED.state_version`,
      [streamId, version, policy.version, JSON.stringify(state)],
    );
  }
}
