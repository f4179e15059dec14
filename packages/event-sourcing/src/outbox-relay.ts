import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@rigmarket/contracts';
import type { Database } from './database';
import type { Transport } from './transport';
import { idleBackoff } from './idle-backoff';
import { contextOfSchema, outboxPublished, outboxRelayLag } from './metrics';
import { produceSpans } from './tracing';

export interface RelayOptions {
  /** How often to look for rows when nobody triggers a flush. */
  pollIntervalMs?: number;
  /**
   * While polls find nothing, the delay doubles up to this (off when unset). For a process whose commits
   * flush the relay themselves (embedded mode), so polling is only the fallback and an idle server sleeps.
   */
  idlePollMaxMs?: number;
  /** How long a relay's lease on the outbox lasts; a dead relay's lease expires after this. */
  leaseMs?: number;
  /**
   * At start, take the lease whoever holds it: only for the sole process using its database (embedded), where
   * a lease found at start was left by its previous life and would hold every event back until it expires.
   */
  takeLeaseAtStart?: boolean;
  batchSize?: number;
  onError?: (error: unknown) => void;
}

interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  envelope: EventEnvelope | string;
}

/**
 * Publishes a context's outbox to the transport, in outbox order.
 *
 * - A row is marked published only after the transport acknowledged it, so a crash in between
 *   re-sends it (at least once; consumers dedupe) and never loses it.
 * - Every committed row is ready, in id order: outbox rows are written only by `EventStore.append`, which
 *   locks the context's chain head before it draws their ids and keeps it to its commit, and PostgreSQL
 *   makes a commit visible before it releases the transaction's locks. So a row is visible only once every
 *   row with a lower id is committed (or rolled back): no lower id can still commit after it. Transactions
 *   of other contexts or databases never hold a row back. (The id sequence must keep CACHE 1: ids cached
 *   per session would be drawn before the lock.)
 * - A lease row lets one relay per context work at a time, even with several processes.
 */
export class OutboxRelay {
  readonly holder = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** The poll in progress (its look at the outbox, then its flush): stop() waits for it. */
  private polling: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Between start() and stop(): only a started relay looks again on its own. */
  private started = false;
  /** A look again when another holder's lease ends, set while rows wait behind it. */
  private leaseTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly schema: string,
    private readonly transport: Transport,
    private readonly options: RelayOptions = {},
  ) {}

  start(): void {
    this.stopped = false;
    this.started = true;
    const delay = idleBackoff(this.options.pollIntervalMs ?? 250, this.options.idlePollMaxMs);
    const takeLease = this.options.takeLeaseAtStart
      ? this.db.execute(`UPDATE ${this.schema}.outbox_relay_lease SET lease_until = 'epoch' WHERE id = 1`)
      : Promise.resolve(0);
    const tick = (): void => {
      if (this.stopped) return;
      const polled = this.poll()
        .then((published) => delay.after(published))
        .catch((error: unknown) => {
          delay.after(0);
          this.options.onError?.(error);
        })
        .finally(() => {
          if (this.polling === polled) this.polling = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, delay.ms);
        });
      this.polling = polled;
    };
    // The lease taken at start counts as the first poll: stop() waits for it too.
    const first: Promise<void> = takeLease
      .then(
        () => undefined,
        (error: unknown) => this.options.onError?.(error),
      )
      .finally(() => {
        if (this.polling === first) this.polling = undefined;
        tick();
      });
    this.polling = first;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
    // The poll and the flush in progress end first: nothing of this relay runs after stop() resolved.
    while (this.polling || this.running)
      await Promise.all([this.polling, this.running?.catch(() => undefined)]);
    await this.db
      .execute(
        `UPDATE ${this.schema}.outbox_relay_lease SET lease_until = 'epoch' WHERE id = 1 AND holder = $1`,
        [this.holder],
      )
      .catch(() => undefined);
  }

  /**
   * A poll: flushes only when a row waits. Reading the partial index of unpublished rows costs a fraction of
   * taking the lease (an UPDATE, a WAL write), which an idle server would otherwise do on every poll.
   */
  private async poll(): Promise<number> {
    if (this.stopped) return 0;
    const [waiting] = await this.db.query<{ waiting: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.schema}.outbox WHERE published_at IS NULL) AS waiting`,
    );
    return waiting?.waiting ? this.flush() : 0;
  }

  /** Publishes everything committed so far. Concurrent calls share one run (and one more after it). */
  async flush(): Promise<number> {
    // A stopped relay publishes nothing more (a commit that ends during shutdown leaves its rows to the next start).
    if (this.stopped) return 0;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let total = 0;
      let leaseEndsInMs: number | undefined;
      try {
        do {
          this.again = false;
          const drained = await this.drain();
          total += drained.published;
          leaseEndsInMs = drained.leaseEndsInMs;
        } while (this.again);
      } finally {
        this.running = undefined;
      }
      this.lookAgainWhenLeaseEnds(leaseEndsInMs);
      return total;
    })();
    return this.running;
  }

  /**
   * Another relay holds the lease while rows wait (a second replica, or a process killed while holding it):
   * look again as soon as its lease ends instead of at the next poll, which an idle embedded server backs off
   * to seconds. A live holder renews its lease while it drains, so this costs one look per lease period.
   */
  private lookAgainWhenLeaseEnds(leaseEndsInMs: number | undefined): void {
    if (leaseEndsInMs === undefined || !this.started || this.leaseTimer) return;
    this.leaseTimer = setTimeout(
      () => {
        this.leaseTimer = undefined;
        if (this.started) this.flush().catch((error: unknown) => this.options.onError?.(error));
      },
      Math.max(0, leaseEndsInMs) + 5,
    );
  }

  /**
   * Publishes every committed row, in id order; `leaseEndsInMs`: another relay holds the lease, until then.
   */
  private async drain(): Promise<{ published: number; leaseEndsInMs?: number }> {
    let published = 0;
    const batchSize = this.options.batchSize ?? 200;
    for (;;) {
      // The lease taken (or renewed) and the next rows read in one statement: always one row back, whose
      // `leased` says whether this relay holds the lease (no outbox row then), and whose id is null when
      // nothing waits.
      // ORDER BY o.id, the bigint column: a bare `id` would name the text alias of the SELECT list and
      // sort '10' before '9', delivering a stream's events out of order (a read-model drift found under load).
      // No wait for transactions still in flight: what this statement sees is a prefix in id order (above).
      const read = await this.db.query<OutboxRow & { leased: number; id: string | null }>(
        `WITH lease AS (
           UPDATE ${this.schema}.outbox_relay_lease
              SET holder = $1, lease_until = now() + ($2 || ' milliseconds')::interval
            WHERE id = 1 AND (holder = $1 OR lease_until < now())
           RETURNING id)
         SELECT (SELECT count(*) FROM lease)::int AS leased, o.id::text AS id, o.topic, o.message_key, o.envelope
           FROM (SELECT 1) AS one
           LEFT JOIN LATERAL (
             SELECT w.id, w.topic, w.message_key, w.envelope
               FROM ${this.schema}.outbox w
              WHERE w.published_at IS NULL AND EXISTS (SELECT 1 FROM lease)
              ORDER BY w.id LIMIT $3) AS o ON TRUE
          ORDER BY o.id`,
        [this.holder, String(this.options.leaseMs ?? 5000), batchSize],
      );
      if (!read[0]?.leased) {
        const [lease] = await this.db.query<{ ends_in_ms: number }>(
          `SELECT (EXTRACT(EPOCH FROM lease_until - now()) * 1000)::float8 AS ends_in_ms
             FROM ${this.schema}.outbox_relay_lease WHERE id = 1`,
        );
        return { published, leaseEndsInMs: lease ? Number(lease.ends_in_ms) : undefined };
      }
      const rows = read.filter((r): r is typeof r & { id: string } => r.id !== null);
      if (rows.length === 0) return { published };
      const messages = rows.map((r) => ({
        topic: r.topic,
        key: r.message_key,
        envelope: typeof r.envelope === 'string' ? (JSON.parse(r.envelope) as EventEnvelope) : r.envelope,
      }));
      // Each traced event gets a PRODUCER span (a child of its request's), whose context the message carries.
      const traced = produceSpans(messages);
      try {
        await this.transport.publish(traced.messages);
        traced.end();
      } catch (error) {
        traced.end(error);
        throw error;
      }
      const context = contextOfSchema(this.schema);
      const now = Date.now();
      outboxPublished.inc({ context }, messages.length);
      for (const { envelope } of messages)
        outboxRelayLag.observe({ context }, Math.max(0, now - Date.parse(envelope.occurredAt)) / 1000);
      await this.db.execute(
        `UPDATE ${this.schema}.outbox SET published_at = now() WHERE id = ANY($1::bigint[])`,
        [rows.map((r) => r.id)],
      );
      published += rows.length;
      // A short batch was everything committed when it was read; a commit since then flushed again (flush's
      // `again`), so no second look is needed here.
      if (rows.length < batchSize) return { published };
    }
  }
}
