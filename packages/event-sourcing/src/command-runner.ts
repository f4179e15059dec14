import type { DomainEvent, EventEnvelope, EventMetadata } from '@rigmarket/contracts';
import type { Clock } from './clock';
import type { Database, Sql } from './database';
import { type EventStore, WrongExpectedVersion } from './event-store';
import { type Projection, applyProjection } from './projections';

export interface Evolver<State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
}

export interface CommandResult<State> {
  events: EventEnvelope[];
  /** State after the new events. */
  state: State;
  version: number;
}

export interface HandleOptions {
  /** Extra writes in the same transaction (e.g. an idempotency record). */
  alsoInTransaction?: (sql: Sql, events: EventEnvelope[]) => Promise<void>;
  maxAttempts?: number;
}

/**
 * Runs one command against one stream in one transaction: read, fold, decide (pure), append with the
 * expected version, write the outbox, apply the context's own (inline) projections so the caller can
 * read its writes at once. A version conflict re-reads and decides again, a few times with backoff.
 * After commit it hands the new events to the relay.
 */
export class CommandRunner {
  constructor(
    private readonly db: Database,
    readonly store: EventStore,
    private readonly inlineProjections: readonly Projection[],
    readonly clock: Clock,
    private readonly afterCommit: () => Promise<unknown> = async () => undefined,
  ) {}

  async handle<State, Event extends DomainEvent>(
    streamId: string,
    evolver: Evolver<State, Event>,
    decide: (state: State, now: Date) => Event[],
    metadata: EventMetadata,
    options: HandleOptions = {},
  ): Promise<CommandResult<State>> {
    const maxAttempts = options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await this.db.transaction(async (sql) => {
          const history = await this.store.readStream(sql, streamId);
          let state = history.reduce(
            (s, e) => evolver.evolve(s, { type: e.type, data: e.data } as Event),
            evolver.initialState(),
          );
          const now = this.clock.now();
          const events = decide(state, now);
          if (events.length === 0) return { events: [], state, version: history.length };
          const envelopes = await this.store.append(sql, streamId, history.length, events, metadata, now);
          for (const envelope of envelopes) {
            for (const projection of this.inlineProjections) {
              await applyProjection(sql, this.store.schema, projection, envelope);
            }
          }
          await options.alsoInTransaction?.(sql, envelopes);
          state = events.reduce((s, e) => evolver.evolve(s, e), state);
          return { events: envelopes, state, version: history.length + events.length };
        });
        if (result.events.length > 0) await this.afterCommit().catch(() => undefined);
        return result;
      } catch (error) {
        if (error instanceof WrongExpectedVersion && attempt < maxAttempts) {
          await new Promise((r) => setTimeout(r, 5 * 2 ** attempt + Math.random() * 10));
          continue;
        }
        throw error;
      }
    }
  }

  /** Reads a stream's current state without deciding anything. */
  async load<State, Event extends DomainEvent>(
    streamId: string,
    evolver: Evolver<State, Event>,
  ): Promise<{ state: State; version: number }> {
    const history = await this.db.transaction((sql) => this.store.readStream(sql, streamId));
    return {
      state: history.reduce(
        (s, e) => evolver.evolve(s, { type: e.type, data: e.data } as Event),
        evolver.initialState(),
      ),
      version: history.length,
    };
  }
}
