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
 * - Only rows whose transaction is older than every transaction still in flight are read: sequence
 *   numbers are handed out before commit, so a lower id can commit after a higher one.
 * - A lease row lets one relay per context work at a time, even with several processes.
 */
export class OutboxRelay {
  readonly holder = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly schema: string,
    private readonly transport: Transport,
    private readonly options: RelayOptions = {},
  ) {}

  start(): void {
    this.stopped = false;
    const delay = idleBackoff(this.options.pollIntervalMs ?? 250, this.options.idlePollMaxMs);
    const tick = (): void => {
      if (this.stopped) return;
      this.flush()
        .then((published) => delay.after(published))
        .catch((error: unknown) => {
          delay.after(0);
          this.options.onError?.(error);
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, delay.ms);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    await this.db
      .execute(
        `UPDATE ${this.schema}.outbox_relay_lease SET lease_until = 'epoch' WHERE id = 1 AND holder = $1`,
        [this.holder],
      )
      .catch(() => undefined);
  }

  /** Publishes everything committed so far. Concurrent calls share one run (and one more after it). */
  async flush(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let total = 0;
      try {
        do {
          this.again = false;
          total += await this.drain();
        } while (this.again);
      } finally {
        this.running = undefined;
      }
      return total;
    })();
    return this.running;
  }

  private async drain(): Promise<number> {
    let published = 0;
    for (;;) {
      const leased = await this.db.execute(
        `UPDATE ${this.schema}.outbox_relay_lease
            SET holder = $1, lease_until = now() + ($2 || ' milliseconds')::interval
          WHERE id = 1 AND (holder = $1 OR lease_until < now())`,
        [this.holder, String(this.options.leaseMs ?? 5000)],
      );
      if (leased === 0) return published;
      const rows = await this.db.query<OutboxRow>(
        // ORDER BY o.id, the bigint column: a bare `id` would name the text alias of the SELECT list and
        // sort '10' before '9', delivering a stream's events out of order (a read-model drift found under load).
        `SELECT o.id::text AS id, o.topic, o.message_key, o.envelope FROM ${this.schema}.outbox o
          WHERE o.published_at IS NULL AND o.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
          ORDER BY o.id LIMIT $1`,
        [this.options.batchSize ?? 200],
      );
      if (rows.length === 0) return published;
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
    }
  }
}
