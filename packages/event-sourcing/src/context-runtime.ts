import { type ContextName, CONTEXT_SCHEMAS, type DomainEvent } from '@rigmarket/contracts';
import type { Clock } from './clock';
import { CommandRunner } from './command-runner';
import { CommitSignal } from './commit-signal';
import type { Database } from './database';
import type { Decider } from './decider';
import { deadLettersMigration } from './dead-letters';
import { eventChainMigration } from './event-chain';
import type { EventSource } from './event-source';
import { EventStore } from './event-store';
import { type Migration, eventStoreMigration, runMigrations, snapshotsMigration } from './migrations';
import { meterContext } from './metrics';
import { OutboxRelay, type RelayOptions } from './outbox-relay';
import { type Projection, rebuildContextProjection, subscribeProjections } from './projections';
import { type Reactor, ReactorWorker, type ReactorWorkerOptions, reactorQueueMigration } from './reactors';
import type { Transport } from './transport';

/**
 * The tables every context has, before its own migrations: event store and outbox, snapshots, reactor queue,
 * dead letters, the events' hash chain.
 */
export const coreMigrations: readonly Migration[] = [
  eventStoreMigration,
  deadLettersMigration,
  snapshotsMigration,
  reactorQueueMigration,
  eventChainMigration,
];

/** A context's migrations in the order they run: the core tables first, then its own. */
export function contextMigrations(definition: ContextDefinition): readonly Migration[] {
  return [...coreMigrations, ...definition.migrations];
}

/** Runs each context's migrations in its schema, in turn: the ids each applied (empty: up to date). */
export async function migrateContexts(
  db: Database,
  contexts: readonly ContextDefinition[],
): Promise<string[][]> {
  const applied: string[][] = [];
  for (const c of contexts)
    applied.push(await runMigrations(db, CONTEXT_SCHEMAS[c.context], contextMigrations(c)));
  return applied;
}

/** What a bounded context declares about its storage and read models. */
export interface ContextDefinition {
  context: ContextName;
  /** Its own migrations; the event-store tables come first automatically. */
  migrations: readonly Migration[];
  /** Read models of its own events, updated in the command's transaction (read-your-writes). */
  inlineProjections: readonly Projection[];
  /**
   * Read models of other contexts' events, fed by the transport. A projection of both (own and others'
   * streams) is listed in both: its own streams are applied inline, only the others' are subscribed.
   */
  subscribedProjections: readonly Projection[];
  /**
   * How its aggregates fold, by stream type: what the operator's `rigmarket history --as-of` uses to show an
   * object's state at a moment. A stream type without one is shown as events only.
   */
  folds?: Readonly<Record<string, StreamFold>>;
  /**
   * Tables written beside the events that no projection rebuilds (state the events do not hold: sealed keys,
   * queued host commands, heartbeats): `rigmarket export` writes their rows and `import` loads them, in the
   * order of `orderBy` (their primary key). Every id sequence of the schema moves with them.
   */
  carriedTables?: readonly CarriedTable[];
}

/** A table of a context's schema that a move carries row by row (ContextDefinition.carriedTables). */
export interface CarriedTable {
  /** The table's name in the context's schema. */
  table: string;
  /** The columns of its primary key, the order its rows are written in. */
  orderBy: string;
}

/** An aggregate's initialState and evolve, with its types erased so that a context can list several. */
export interface StreamFold {
  initialState(): unknown;
  evolve(state: unknown, event: DomainEvent): unknown;
}

/** A decider (or evolver) as a StreamFold. */
export function streamFold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
): StreamFold {
  return {
    initialState: () => decider.initialState(),
    evolve: (state, event) => decider.evolve(state as State, event as Event),
  };
}

/** Every projection of a context, once (one listed as inline and subscribed counts once). */
export function contextProjections(definition: ContextDefinition): Projection[] {
  return [...new Set([...definition.inlineProjections, ...definition.subscribedProjections])];
}

export interface RuntimeInfra {
  db: Database;
  transport: Transport;
  clock: Clock;
  relay?: RelayOptions;
  /** Filled as contexts start: the app flushes their relays once the transport opens, `/readyz` watches them. */
  started?: ContextRuntime[];
  /** Prefix of consumer groups, e.g. the app name. */
  groupPrefix?: string;
  /** Run migrations at start (default true). */
  migrate?: boolean;
  /** The context's one reactor worker (poll interval, attempts). */
  reactors?: ReactorWorkerOptions;
  /**
   * This process is the only one using the database (embedded mode: PGlite opens a data folder in one
   * process). Leases and claims found at start were then left by a previous life of the process (kill -9):
   * they are taken back at once instead of holding events, reactor work and host commands back until they
   * expire (5-30 s).
   */
  soleProcess?: boolean;
  /**
   * Where a rebuild reads other contexts' events (Kafka topics kept forever, when the contexts have separate
   * databases); absent: their event stores in this database. Its own events always come from its store.
   */
  eventSource?: EventSource;
}

/** The running storage side of one context: migrations applied, relay running, projections subscribed. */
export class ContextRuntime {
  readonly schema: string;
  readonly store: EventStore;
  readonly relay: OutboxRelay;
  readonly runner: CommandRunner;
  /** One worker runs every reactor of the context (each module adds its own with addReactors). */
  readonly reactorWorker: ReactorWorker;
  /** Takes the context off the process's scrape-time gauges (metrics.ts) when it stops. */
  private unmeter: (() => void) | undefined;
  /** Fires after each command of this process that appended events (live streams wait on it). */
  readonly commits = new CommitSignal();

  private constructor(
    readonly definition: ContextDefinition,
    readonly infra: RuntimeInfra,
  ) {
    this.schema = CONTEXT_SCHEMAS[definition.context];
    this.store = new EventStore(definition.context, this.schema);
    this.relay = new OutboxRelay(infra.db, this.schema, infra.transport, {
      ...infra.relay,
      takeLeaseAtStart: infra.soleProcess,
    });
    this.runner = new CommandRunner(
      infra.db,
      this.store,
      definition.inlineProjections,
      infra.clock,
      () => this.relay.flush(),
      () => this.commits.notify(),
    );
    this.reactorWorker = new ReactorWorker(infra.db, this.schema, [], {
      ...infra.reactors,
      releaseClaimsAtStart: infra.soleProcess,
    });
  }

  static async start(definition: ContextDefinition, infra: RuntimeInfra): Promise<ContextRuntime> {
    const runtime = new ContextRuntime(definition, infra);
    if (infra.migrate !== false) await runtime.migrate();
    await subscribeProjections(
      infra.transport,
      infra.db,
      runtime.schema,
      definition.subscribedProjections,
      infra.groupPrefix ?? `rigmarket.${definition.context}`,
      definition.context,
    );
    infra.started?.push(runtime);
    runtime.unmeter = meterContext({
      context: definition.context,
      schema: runtime.schema,
      db: infra.db,
      subscribedProjections: definition.subscribedProjections,
      reactorNames: () => runtime.reactorWorker.reactorNames(),
      reactorMaxAttempts: infra.reactors?.maxAttempts ?? 10,
    });
    runtime.relay.start();
    return runtime;
  }

  /**
   * Adds reactors (policies that run commands) to the context's one worker, subscribes them and starts
   * the worker if it is not running yet. Called by each module once the services its reactors use exist.
   */
  async addReactors(reactors: readonly Reactor[]): Promise<ReactorWorker> {
    await this.reactorWorker.add(
      reactors,
      this.infra.transport,
      this.infra.groupPrefix ?? `rigmarket.${this.definition.context}`,
    );
    this.reactorWorker.start();
    return this.reactorWorker;
  }

  get db(): Database {
    return this.infra.db;
  }

  get projections(): Projection[] {
    return contextProjections(this.definition);
  }

  /** The next value of one of this context's id sequences (ids are public integers, like the spec's). */
  async nextId(sequence: string): Promise<number> {
    const rows = await this.infra.db.query<{ id: string }>(
      `SELECT nextval('${this.schema}.${sequence}')::text AS id`,
    );
    return Number(rows[0]!.id);
  }

  migrate(): Promise<string[]> {
    return runMigrations(this.infra.db, this.schema, contextMigrations(this.definition));
  }

  rebuild(projectionName: string): Promise<number> {
    const projection = this.projections.find((p) => p.name === projectionName);
    if (!projection) throw new Error(`Unknown projection ${projectionName} in ${this.definition.context}`);
    return rebuildContextProjection(
      this.infra.db,
      this.definition.context,
      projection,
      this.infra.eventSource,
    );
  }

  async stop(): Promise<void> {
    this.unmeter?.();
    await this.reactorWorker.stop();
    await this.relay.stop();
  }
}

// Nest calls this on the runtime provider when the application shuts down.
export interface ContextRuntime {
  onApplicationShutdown(): Promise<void>;
}
ContextRuntime.prototype.onApplicationShutdown = function onApplicationShutdown(this: ContextRuntime) {
  return this.stop();
};
