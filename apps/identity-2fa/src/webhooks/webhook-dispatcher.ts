import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type ContextRuntime, idleBackoff } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { SCHEMA } from '../schema';
import type { SecretBox } from '../tfa/tfa.crypto';
import { TFA_SECRET_BOX } from '../tfa/tfa.io';
import { sweepWebhookLog } from './webhook-deliveries';
import { type AttemptResult, postWebhook, signedHeaders } from './webhook-sender';
import { WEBHOOK_SETTINGS, type WebhookSettings, retryDelayMs } from './webhook-settings';
import { webhookDecider, webhookStreamId } from './webhook.decider';

interface Due {
  delivery_id: string;
  endpoint_id: number;
  message_id: string;
  payload: string;
  attempts: number;
  attempts_left: number;
  manual: boolean;
  url: string;
  sealed_secret: string;
}

/** How long a claimed delivery is hidden from other workers: past the attempt's timeout. */
const claimMs = (settings: WebhookSettings) => settings.timeoutMs + 30_000;
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Sends pending webhook deliveries (one worker per identity process; several share the table through
 * `FOR UPDATE SKIP LOCKED` and a lease). Each attempt is signed afresh (Standard Webhooks), recorded in
 * `webhook_attempts`, and either finishes the delivery (2xx), schedules the next try after the retry
 * schedule's wait with jitter, or, with no try left, marks it failed. An endpoint whose attempts fail
 * `disableAfterFailures` times in a row is disabled by a command on its stream (WebhookEndpointDisabled,
 * in the audit log). Deliveries of a disabled endpoint wait, and go out if it is enabled again.
 *
 * New deliveries wake it (`wake`); it also polls, every `pollMs`, or, where the runtime's reactors back off
 * while idle (embedded mode: `reactors.idlePollMaxMs`), with a delay that doubles up to that while passes send
 * nothing, but never past the next retry that is due (then within `pollMs` of it, as before). In embedded mode
 * (the runtime's `soleProcess`) it takes back at start the claims a killed life of the process left.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('webhooks');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastSweep = 0;
  private delay: { readonly ms: number; after(found: number): void } | undefined;
  /** Milliseconds until the earliest pending retry, as of the last pass (undefined: none pending). */
  private nextDueMs: number | undefined;

  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(WEBHOOK_SETTINGS) private readonly settings: WebhookSettings,
    @Inject(TFA_SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // The only process on its database (embedded): a claim found now was left by a killed life of this
    // process (in the middle of an attempt), and would hold its delivery back for the attempt's timeout + 30 s.
    if (this.runtime.infra.soleProcess)
      await this.runtime.db
        .execute(
          `UPDATE ${SCHEMA}.webhook_deliveries SET claimed_until = 'epoch' WHERE status = 'pending' AND claimed_until > now()`,
        )
        .catch((error: unknown) =>
          this.logger.warn(`taking back the claims a killed life left failed: ${String(error)}`),
        );
    this.stopped = false;
    this.delay = idleBackoff(this.settings.pollMs, this.runtime.infra.reactors?.idlePollMaxMs);
    void this.drain();
  }

  /** After each pass: the next poll, sooner while passes send something or a retry falls due. */
  private schedule(sent: number): void {
    if (this.stopped || !this.delay) return;
    this.delay.after(sent);
    const due = this.nextDueMs ?? Infinity;
    const ms = Math.max(this.settings.pollMs, Math.min(this.delay.ms, due));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.drain(), ms);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** New deliveries are due: send them now rather than at the next poll. */
  wake(): void {
    setImmediate(() => void this.drain());
  }

  drain(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let sent = 0;
      try {
        do {
          this.again = false;
          while (!this.stopped) {
            const n = await this.sendBatch();
            sent += n;
            if (n === 0) break;
          }
          // Inside the loop: a wake during it runs another pass, not the next (maybe backed-off) poll.
          await this.housekeeping();
        } while (this.again && !this.stopped);
      } catch (error) {
        // The database is away (shutdown, restart): the next poll tries again.
        if (!this.stopped) this.logger.warn(`webhook delivery pass failed: ${String(error)}`);
      } finally {
        this.running = undefined;
        this.schedule(sent);
      }
    })();
    return this.running;
  }

  private async housekeeping(): Promise<void> {
    const [row] = await this.runtime.db.query<{ next_due_ms: number | string | null }>(
      `SELECT (SELECT EXTRACT(EPOCH FROM d.next_attempt_at - now()) * 1000 FROM ${SCHEMA}.webhook_deliveries d
                 JOIN ${SCHEMA}.webhook_endpoints e ON e.endpoint_id = d.endpoint_id
                WHERE d.status = 'pending' AND d.claimed_until < now() AND e.enabled AND e.deleted_at IS NULL
                ORDER BY d.next_attempt_at LIMIT 1) AS next_due_ms`,
    );
    this.nextDueMs = row?.next_due_ms === null || row === undefined ? undefined : Number(row.next_due_ms);
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    const removed = await sweepWebhookLog(this.runtime.db, this.settings.retentionDays);
    if (removed > 0) this.logger.log(`deleted ${removed} webhook deliveries past their retention`);
  }

  private async sendBatch(): Promise<number> {
    const due = await this.runtime.db.query<Due>(
      `WITH claimed AS (
         UPDATE ${SCHEMA}.webhook_deliveries d SET claimed_until = now() + ($1 || ' milliseconds')::interval
          WHERE d.delivery_id IN (
            SELECT d2.delivery_id FROM ${SCHEMA}.webhook_deliveries d2
              JOIN ${SCHEMA}.webhook_endpoints e ON e.endpoint_id = d2.endpoint_id
             WHERE d2.status = 'pending' AND d2.next_attempt_at <= now() AND d2.claimed_until < now()
               AND e.enabled AND e.deleted_at IS NULL
             ORDER BY d2.next_attempt_at, d2.delivery_id LIMIT 10 FOR UPDATE OF d2 SKIP LOCKED)
          RETURNING d.delivery_id, d.endpoint_id, d.message_id, d.payload, d.attempts, d.attempts_left, d.manual)
       SELECT c.delivery_id::text, c.endpoint_id, c.message_id, c.payload, c.attempts, c.attempts_left,
              c.manual, e.url, e.sealed_secret
         FROM claimed c JOIN ${SCHEMA}.webhook_endpoints e ON e.endpoint_id = c.endpoint_id`,
      [String(claimMs(this.settings))],
    );
    await Promise.all(due.map((delivery) => this.attempt(delivery)));
    return due.length;
  }

  private async attempt(delivery: Due): Promise<void> {
    let result: AttemptResult;
    try {
      const secret = this.box.open(delivery.sealed_secret);
      const headers = signedHeaders(secret, delivery.message_id, delivery.payload, new Date());
      result = await postWebhook(delivery.url, headers, delivery.payload, {
        timeoutMs: this.settings.timeoutMs,
        allowPrivate: this.settings.allowPrivateTargets,
      });
    } catch (error) {
      result = {
        statusCode: null,
        ok: false,
        error: String(error).slice(0, 300),
        excerpt: null,
        durationMs: 0,
      };
    }
    const attempt = Number(delivery.attempts) + 1;
    const left = Number(delivery.attempts_left) - 1;
    const retryIn = result.ok || left <= 0 ? undefined : retryDelayMs(this.settings.retryScheduleMs, attempt);
    const status = result.ok ? 'delivered' : retryIn === undefined ? 'failed' : 'pending';
    const failures = await this.runtime.db.transaction(async (sql) => {
      await sql.execute(
        `INSERT INTO ${SCHEMA}.webhook_attempts (delivery_id, attempt, manual, attempted_at, status_code, error, response_excerpt, duration_ms)
         VALUES ($1, $2, $3, now(), $4, $5, $6, $7) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
        [
          delivery.delivery_id,
          attempt,
          delivery.manual,
          result.statusCode,
          result.error,
          result.excerpt,
          result.durationMs,
        ],
      );
      await sql.execute(
        `UPDATE ${SCHEMA}.webhook_deliveries SET attempts = $2, attempts_left = $3, status = $4,
                next_attempt_at = now() + ($5 || ' milliseconds')::interval, claimed_until = 'epoch', manual = false,
                finished_at = CASE WHEN $4 = 'pending' THEN NULL ELSE now() END
          WHERE delivery_id = $1`,
        [delivery.delivery_id, attempt, Math.max(0, left), status, String(retryIn ?? 0)],
      );
      const [health] = await sql.query<{ consecutive_failures: number }>(
        result.ok
          ? `INSERT INTO ${SCHEMA}.webhook_endpoint_health (endpoint_id, consecutive_failures, last_success_at) VALUES ($1, 0, now())
             ON CONFLICT (endpoint_id) DO UPDATE SET consecutive_failures = 0, last_success_at = now()
             RETURNING consecutive_failures`
          : `INSERT INTO ${SCHEMA}.webhook_endpoint_health (endpoint_id, consecutive_failures, last_failure_at) VALUES ($1, 1, now())
             ON CONFLICT (endpoint_id) DO UPDATE SET consecutive_failures = ${SCHEMA}.webhook_endpoint_health.consecutive_failures + 1, last_failure_at = now()
             RETURNING consecutive_failures`,
        [delivery.endpoint_id],
      );
      return Number(health?.consecutive_failures ?? 0);
    });
    if (!result.ok)
      this.logger.warn(
        `webhook delivery ${delivery.delivery_id} to endpoint ${delivery.endpoint_id} failed (attempt ${attempt}, ${result.statusCode ?? result.error}); ${status === 'pending' ? `retry in ${retryIn} ms` : 'no retry left'}`,
      );
    if (failures >= this.settings.disableAfterFailures) {
      await this.runtime.runner.run(
        webhookStreamId(delivery.endpoint_id),
        webhookDecider,
        { type: 'DisableFailingWebhookEndpoint', consecutiveFailures: failures },
        {
          correlationId: `webhook-delivery-${delivery.delivery_id}`,
          causationId: delivery.message_id,
        },
      );
    }
  }
}
