import {
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  topicFor,
  upcast,
} from '@rigmarket/contracts';
import { deadLetterLogger } from './dead-letters';
import { idleBackoff } from './idle-backoff';
import { contextOfSchema, reactorRuns } from './metrics';
import { consumeSpans } from './tracing';
import type { Database } from './database';
import type { Migration } from './migrations';
import { type EnvelopeOf, type StreamSource, invalidInboundEvent } from './projections';
import type { Delivery, Subscription, Transport } from './transport';

/**
 * A policy that turns some events into work with side effects, typically a command on another
 * stream ("credit exhausted -> stop the account's instances"). Work never runs inside a delivery: the
 * event is queued durably first and a worker runs it afterwards. Running a command inside the
 * delivery would deadlock the in-process transport (the command's relay publishes into the delivery
 * chain that is waiting for this handler) and would hold Kafka's partition while it runs.
 *
 * `E` is the union of the events it acts on: the worker passes only those types (listed in `eventTypes`),
 * narrowed once, so `wants` and `react` switch on `event.type` without casting.
 */
export interface Reactor<E extends DomainEvent = DomainEvent> {
  name: string;
  sources: readonly StreamSource[];
  /** The event types it may act on; the others are not queued. */
  eventTypes: readonly E['type'][];
  /** Which of those call for work (absent: all of them). */
  wants?(event: EnvelopeOf<E>): boolean;
  /** The work. At least once: after a crash it can run again, so it must be idempotent. */
  react(event: EnvelopeOf<E>): Promise<void>;
  /**
   * Optional: the work of several queued events at once (in queue order; e.g. one command per target stream
   * instead of one per event). It must leave what `react` on each in turn leaves. If it fails, the worker runs
   * the events one by one with `react`, so a failing event is retried (and parked) alone. Such a reactor must
   * not depend on the order of its events: events delivered together are queued with one statement.
   */
  reactBatch?(events: readonly EnvelopeOf<E>[]): Promise<void>;
}

/** The metadata of work an event calls for (a reactor's commands): its conversation, caused by the event. */
export function causedBy(event: Pick<EventEnvelope, 'eventId' | 'metadata'>): EventMetadata {
  return { correlationId: event.metadata.correlationId, causationId: event.eventId };
}

/** The reactor's filter: a type it lists and, if it has `wants`, wanted. Narrows the envelope. */
function reactorWants<E extends DomainEvent>(
  reactor: Reactor<E>,
  event: EventEnvelope,
): event is EnvelopeOf<E> {
  if (!(reactor.eventTypes as readonly string[]).includes(event.type)) return false;
  return reactor.wants ? reactor.wants(event as EnvelopeOf<E>) : true;
}

export const reactorQueueMigration: Migration = {
  id: 'core-0004-reactor-queue',
  replaces: '0001-reactor-queue',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.reactor_queue (
        reactor TEXT NOT NULL,
        event_id TEXT NOT NULL,
        envelope JSONB NOT NULL,
        queued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        attempts INTEGER NOT NULL DEFAULT 0,
        claimed_until TIMESTAMPTZ NOT NULL DEFAULT 'epoch',
        last_error TEXT,
        done_at TIMESTAMPTZ,
        PRIMARY KEY (reactor, event_id)
      )`);
    await sql.execute(
      `CREATE INDEX reactor_queue_pending ON ${s}.reactor_queue (claimed_until) WHERE done_at IS NULL`,
    );
  },
};

export interface ReactorWorkerOptions {
  pollIntervalMs?: number;
  /** While polls find nothing, the delay doubles up to this (off when unset); deliveries drain at once anyway. */
  idlePollMaxMs?: number;
  /** How long a claimed item is hidden from other workers while it runs. */
  claimMs?: number;
  /**
   * At start, make every pending item due now: only for the sole process using its database (embedded), where
   * a claim found at start was left by its previous life and would hide the item until it expires.
   */
  releaseClaimsAtStart?: boolean;
  /** After this many failures an item is left with its last error for an operator. */
  maxAttempts?: number;
  /** How many items a reactor with `reactBatch` takes at once (default 200; others take 20). */
  batchSize?: number;
  onError?: (reactor: string, error: unknown, event?: EventEnvelope) => void;
}

/** The shortest wait before a poll that a pending retry's due time asks for. */
const MIN_POLL_MS = 20;

interface QueueRow {
  reactor: string;
  event_id: string;
  envelope: EventEnvelope | string;
  attempts: number;
  queued_at: Date | string;
}

/**
 * Queues wanted events of each reactor and runs their work outside the delivery, in queue order; a
 * failing item is retried later with backoff and does not hold back the items behind it. A context runs
 * one worker for all its reactors (ContextRuntime.addReactors).
 */
export class ReactorWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The poll in progress (its read of the queue, then its drain): stop() waits for it. */
  private polling: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  /** Drains set for when a failed item's retry falls due. */
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private readonly reactors: Reactor[];
  /** Items run so far (done or failed): a poll that ran none lets the worker sleep longer. */
  private processed = 0;

  constructor(
    private readonly db: Database,
    private readonly schema: string,
    reactors: readonly Reactor[],
    private readonly options: ReactorWorkerOptions = {},
  ) {
    this.reactors = [...reactors];
  }

  /** Adds reactors to a worker that may already run, and subscribes them. */
  async add(reactors: readonly Reactor[], transport: Transport, groupPrefix: string): Promise<void> {
    for (const reactor of reactors) {
      if (this.reactors.some((r) => r.name === reactor.name))
        throw new Error(`reactor ${reactor.name} is added twice`);
      this.reactors.push(reactor);
      for (const subscription of this.subscriptionsOf([reactor], groupPrefix))
        await transport.subscribe(subscription);
    }
  }

  reactorNames(): string[] {
    return this.reactors.map((r) => r.name);
  }

  subscriptions(groupPrefix: string): Subscription[] {
    return this.subscriptionsOf(this.reactors, groupPrefix);
  }

  private subscriptionsOf(reactors: readonly Reactor[], groupPrefix: string): Subscription[] {
    return reactors.map((reactor) => this.subscriptionOf(reactor, groupPrefix));
  }

  private subscriptionOf(reactor: Reactor, groupPrefix: string): Subscription {
    const handle = async (raw: EventEnvelope): Promise<void> => {
      const isSource = reactor.sources.some(
        (s) => s.context === raw.context && s.streamType === raw.streamType,
      );
      if (!isSource) return;
      const invalid = invalidInboundEvent(reactor.eventTypes, raw);
      if (invalid !== undefined) {
        // Never run: queued as parked (past its attempts) with the schema's complaint, for an operator.
        await this.db.execute(
          `INSERT INTO ${this.schema}.reactor_queue (reactor, event_id, envelope, attempts, last_error) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (reactor, event_id) DO NOTHING`,
          [
            reactor.name,
            raw.eventId,
            JSON.stringify(raw),
            this.options.maxAttempts ?? 10,
            invalid.slice(0, 2000),
          ],
        );
        deadLetterLogger.error(`${this.schema}/reactor:${reactor.name}: ${invalid}; parked in reactor_queue`);
        return;
      }
      const event = upcast(raw);
      if (!reactorWants(reactor, event)) return;
      await this.enqueue(reactor.name, [event]);
    };
    /** Several deliveries: the wanted ones queued with one statement (one invalid: each through `handle`). */
    const handleBatch = async (deliveries: readonly Delivery[]): Promise<void> => {
      const sourced = deliveries
        .map((d) => d.envelope)
        .filter((e) => reactor.sources.some((s) => s.context === e.context && s.streamType === e.streamType));
      if (sourced.some((e) => invalidInboundEvent(reactor.eventTypes, e) !== undefined)) {
        for (const envelope of sourced) await handle(envelope);
        return;
      }
      const wanted = sourced.map((e) => upcast(e)).filter((e) => reactorWants(reactor, e));
      await this.enqueue(reactor.name, wanted);
    };
    return {
      groupId: `${groupPrefix}.reactor.${reactor.name}`,
      topics: [...new Set(reactor.sources.map((s) => topicFor(s.context, s.streamType)))],
      handle,
      // Only for a reactor that takes batches: others keep their events' order in the queue.
      ...(reactor.reactBatch && { handleBatch }),
    };
  }

  /** Queues events for a reactor (an event already queued stays as it is), then drains after the delivery. */
  private async enqueue(reactor: string, events: readonly EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.execute(
      `INSERT INTO ${this.schema}.reactor_queue (reactor, event_id, envelope)
       SELECT $1, q.event_id, q.envelope FROM unnest($2::text[], $3::jsonb[]) WITH ORDINALITY AS q (event_id, envelope, n)
        ORDER BY q.n
       ON CONFLICT (reactor, event_id) DO NOTHING`,
      [reactor, events.map((e) => e.eventId), events.map((e) => JSON.stringify(e))],
    );
    // After the delivery resolves, not inside it.
    setImmediate(() => void this.drain());
  }

  async subscribe(transport: Transport, groupPrefix: string): Promise<void> {
    for (const subscription of this.subscriptions(groupPrefix)) await transport.subscribe(subscription);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const delay = idleBackoff(this.options.pollIntervalMs ?? 1000, this.options.idlePollMaxMs);
    const released = this.options.releaseClaimsAtStart
      ? this.db.execute(
          `UPDATE ${this.schema}.reactor_queue SET claimed_until = now() WHERE done_at IS NULL AND claimed_until > now()`,
        )
      : Promise.resolve(0);
    const tick = (): void => {
      if (this.stopped) return;
      const before = this.processed;
      const next = (dueInMs: number | undefined): void => {
        delay.after(this.processed - before);
        // A retry that falls due before the next poll is not kept waiting for it.
        const ms = dueInMs === undefined ? delay.ms : Math.min(delay.ms, Math.max(MIN_POLL_MS, dueInMs));
        if (!this.stopped) this.timer = setTimeout(tick, ms);
      };
      const polled: Promise<void> = this.poll()
        .then(next, () => next(undefined))
        .finally(() => {
          if (this.polling === polled) this.polling = undefined;
        });
      this.polling = polled;
    };
    // The claims released at start count as the first poll: stop() waits for them too.
    const first: Promise<void> = released
      .then(
        () => undefined,
        (error: unknown) => this.options.onError?.('reactor-worker', error),
      )
      .finally(() => {
        if (this.polling === first) this.polling = undefined;
        tick();
      });
    this.polling = first;
  }

  /**
   * Stops polling and retrying; resolves once the poll and the drain in progress ended, so that no statement
   * of this worker runs after it (the app closes the database next).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    while (this.polling || this.running) await Promise.all([this.polling, this.running]);
  }

  /**
   * A poll: drains only when an item is due. One read of the pending index costs less than the claims (an
   * UPDATE per kind of reactor), which an idle server would otherwise run on every poll. Answers in how many
   * ms the next pending item (a retry waiting out its delay) falls due, if one waits.
   */
  private async poll(): Promise<number | undefined> {
    if (this.reactors.length === 0) return undefined;
    try {
      const [next] = await this.db.query<{ due_in_ms: number | string | null }>(
        `SELECT (EXTRACT(EPOCH FROM min(claimed_until) - now()) * 1000)::float8 AS due_in_ms
           FROM ${this.schema}.reactor_queue
          WHERE done_at IS NULL AND attempts < $1 AND reactor = ANY($2::text[])`,
        [this.options.maxAttempts ?? 10, this.reactors.map((r) => r.name)],
      );
      if (next?.due_in_ms === null || next?.due_in_ms === undefined) return undefined;
      const dueInMs = Number(next.due_in_ms);
      if (dueInMs > 0) return dueInMs;
    } catch {
      // The database is away: the drain reports it.
    }
    if (this.stopped) return undefined;
    await this.drain();
    return undefined;
  }

  private drainIn(ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      void this.drain();
    }, ms + MIN_POLL_MS);
    timer.unref();
    this.retryTimers.add(timer);
  }

  /** Runs every item due now. Concurrent calls share one run (and one more after it). */
  drain(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (!this.stopped && (await this.runBatch()) > 0);
        } while (this.again && !this.stopped);
      } catch (error) {
        // The database is away (shutdown, restart): the next tick tries again.
        if (this.options.onError) this.options.onError('reactor-worker', error);
        else deadLetterLogger.warn(`${this.schema}/reactor-worker: ${String(error)}`);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Claims and runs the items due now: up to 20 of the reactors without `reactBatch`, a batch of those with. */
  private async runBatch(): Promise<number> {
    const single = this.reactors.filter((r) => !r.reactBatch).map((r) => r.name);
    const batched = this.reactors.filter((r) => r.reactBatch).map((r) => r.name);
    let ran = 0;
    if (single.length > 0) {
      const rows = await this.claim(single, 20);
      for (const row of rows) {
        const reactor = this.reactors.find((r) => r.name === row.reactor);
        if (reactor) await this.runOne(reactor, row);
      }
      ran += rows.length;
    }
    if (batched.length > 0) {
      const rows = await this.claim(batched, this.options.batchSize ?? 200);
      for (const reactor of this.reactors.filter((r) => r.reactBatch)) {
        const mine = rows.filter((row) => row.reactor === reactor.name);
        if (mine.length > 0) await this.runMany(reactor, mine);
      }
      ran += rows.length;
    }
    return ran;
  }

  private async claim(reactors: string[], limit: number): Promise<QueueRow[]> {
    // Claimed in autocommit, run outside any transaction: the work opens its own.
    const rows = await this.db.query<QueueRow>(
      `UPDATE ${this.schema}.reactor_queue q SET claimed_until = now() + ($1 || ' milliseconds')::interval, attempts = attempts + 1
        WHERE (q.reactor, q.event_id) IN (
          SELECT reactor, event_id FROM ${this.schema}.reactor_queue
           WHERE done_at IS NULL AND claimed_until < now() AND attempts < $2 AND reactor = ANY($3::text[])
           ORDER BY queued_at, event_id LIMIT $4 FOR UPDATE SKIP LOCKED)
        RETURNING q.reactor, q.event_id, q.envelope, q.attempts, q.queued_at`,
      // Only this worker's reactors (a test may run a worker beside the context's).
      [String(this.options.claimMs ?? 30_000), this.options.maxAttempts ?? 10, reactors, limit],
    );
    this.processed += rows.length;
    // RETURNING does not keep the sub-select's order.
    return rows.sort((a, b) => queueOrder(a) - queueOrder(b) || (a.event_id < b.event_id ? -1 : 1));
  }

  /** A batch reactor's items at once; if that fails, one by one (each then retried or parked alone). */
  private async runMany(reactor: Reactor, rows: readonly QueueRow[]): Promise<void> {
    const events = rows.map(envelopeOf);
    if (rows.length > 1 && events.every((e) => invalidInboundEvent(reactor.eventTypes, e) === undefined)) {
      try {
        // Children of the events' traces: the commands it runs continue them.
        await consumeSpans(
          `${this.schema}/reactor:${reactor.name}`,
          events,
          { 'rigmarket.reactor': reactor.name },
          () => reactor.reactBatch!(events),
        );
        await this.db.execute(
          `UPDATE ${this.schema}.reactor_queue SET done_at = now(), last_error = NULL WHERE reactor = $1 AND event_id = ANY($2::text[])`,
          [reactor.name, rows.map((r) => r.event_id)],
        );
        reactorRuns.inc(
          { context: contextOfSchema(this.schema), reactor: reactor.name, outcome: 'done' },
          rows.length,
        );
        return;
      } catch (error) {
        deadLetterLogger.warn(
          `${this.schema}/reactor:${reactor.name}: a batch of ${rows.length} failed (${error instanceof Error ? error.message : String(error)}); running them one by one`,
        );
      }
    }
    for (const row of rows) await this.runOne(reactor, row);
  }

  private async runOne(reactor: Reactor, row: QueueRow): Promise<void> {
    const event = envelopeOf(row);
    try {
      // A requeued item whose payload breaks its schema fails again with the schema's complaint.
      const invalid = invalidInboundEvent(reactor.eventTypes, event);
      if (invalid !== undefined) throw new Error(invalid);
      // A child of the event's trace: the commands it runs continue that trace.
      await consumeSpans(
        `${this.schema}/reactor:${reactor.name}`,
        [event],
        { 'rigmarket.reactor': reactor.name },
        () => reactor.react(event),
      );
      await this.db.execute(
        `UPDATE ${this.schema}.reactor_queue SET done_at = now(), last_error = NULL WHERE reactor = $1 AND event_id = $2`,
        [row.reactor, row.event_id],
      );
      reactorRuns.inc({ context: contextOfSchema(this.schema), reactor: reactor.name, outcome: 'done' });
    } catch (error) {
      reactorRuns.inc({ context: contextOfSchema(this.schema), reactor: reactor.name, outcome: 'failed' });
      const max = this.options.maxAttempts ?? 10;
      deadLetterLogger.error(
        `${this.schema}/reactor:${reactor.name} failed on event ${event.eventId} (${event.type}, ${event.streamId}@${event.streamPosition}), attempt ${row.attempts} of ${max}${row.attempts >= max ? ', parked in reactor_queue' : ''}: ${error instanceof Error ? error.message : String(error)}`,
      );
      this.options.onError?.(reactor.name, error, event);
      // Retry later with a growing delay.
      const retryMs = Math.min(60_000, 250 * 2 ** row.attempts);
      await this.db.execute(
        `UPDATE ${this.schema}.reactor_queue SET last_error = $3, claimed_until = now() + ($4 || ' milliseconds')::interval
          WHERE reactor = $1 AND event_id = $2`,
        [row.reactor, row.event_id, String(error).slice(0, 2000), String(retryMs)],
      );
      // On time, however far an idle worker's polls have backed off.
      if (row.attempts < max) this.drainIn(retryMs);
    }
  }
}

const envelopeOf = (row: QueueRow): EventEnvelope =>
  typeof row.envelope === 'string' ? (JSON.parse(row.envelope) as EventEnvelope) : row.envelope;

const queueOrder = (row: QueueRow): number => new Date(row.queued_at).getTime();
