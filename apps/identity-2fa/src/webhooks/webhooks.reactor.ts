import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type {
  AccountCharged,
  CreditExhausted,
  CreditGranted,
  CreditReceived,
  InstanceOutbid,
  InstanceStateChanged,
  MaintenanceScheduled,
  SyncCompleted,
  SyncFailed,
} from '@rigmarket/contracts';
import type { ContextRuntime, EnvelopeOf, Reactor, Sql } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { WEBHOOK_INSTANCE_OWNERS_TABLE } from '../read-models/webhook-instance-owners/projection';
import { USER_CREDIT_TABLE } from '../read-models/user-credit/queries';
import { SCHEMA } from '../schema';
import type { WebhookEventType } from './webhook-event-types';
import { WEBHOOK_SETTINGS, type WebhookSettings } from './webhook-settings';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookInterest } from './webhook-interest';

type Source =
  | InstanceStateChanged
  | InstanceOutbid
  | AccountCharged
  | CreditGranted
  | CreditReceived
  | CreditExhausted
  | SyncCompleted
  | SyncFailed
  | MaintenanceScheduled;

/** One webhook message: its type, the accounts it is for, and its `data`. */
interface Message {
  type: WebhookEventType;
  userIds: number[];
  data: Record<string, unknown>;
}

const dollars = (micros: number) => micros / 1_000_000;

/** The webhook type each source event makes: its message's type, and what `wants` asks the endpoints about. */
const WEBHOOK_TYPE_OF: Record<Source['type'], WebhookEventType> = {
  InstanceStateChanged: 'instance.state_changed',
  InstanceOutbid: 'instance.outbid',
  AccountCharged: 'credit.low',
  CreditGranted: 'credit.low',
  CreditReceived: 'credit.low',
  CreditExhausted: 'credit.exhausted',
  SyncCompleted: 'sync.completed',
  SyncFailed: 'sync.failed',
  MaintenanceScheduled: 'maintenance.scheduled',
};

/** How long after an event the reactor waits for its instance's owner to be projected (retrying). */
const OWNER_WAIT_MS = 90_000;

/**
 * Platform events -> webhook deliveries. For each event it works out the webhook message (type, data) and
 * the accounts it concerns, and records one pending delivery per enabled endpoint of those accounts that
 * subscribes to the type, in one transaction (keyed by endpoint and message id, so a rerun adds nothing).
 * The WebhookDispatcher sends them. Runs as a reactor: the event is queued durably on delivery and fanned
 * out afterwards, so neither a restart nor a failure loses it.
 */
@Injectable()
export class WebhooksReactor implements Reactor<Source>, OnApplicationBootstrap {
  readonly name = 'webhooks';
  private readonly logger = new Logger('webhooks');
  readonly sources = [
    { context: 'instance', streamType: 'instance' },
    { context: 'marketplace', streamType: 'ledger' },
    { context: 'sync', streamType: 'sync' },
    { context: 'sync', streamType: 'maintenance' },
  ] as const;
  readonly eventTypes = [
    'InstanceStateChanged',
    'InstanceOutbid',
    'AccountCharged',
    'CreditGranted',
    'CreditReceived',
    'CreditExhausted',
    'SyncCompleted',
    'SyncFailed',
    'MaintenanceScheduled',
  ] as const;

  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(WEBHOOK_SETTINGS) private readonly settings: WebhookSettings,
    private readonly dispatcher: WebhookDispatcher,
    private readonly interest: WebhookInterest,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  /** An event is queued only while some enabled endpoint subscribes to the type of message it makes. */
  wants(event: EnvelopeOf<Source>): boolean {
    return this.interest.wants(WEBHOOK_TYPE_OF[event.type]);
  }

  async react(event: EnvelopeOf<Source>): Promise<void> {
    const added = await this.runtime.db.transaction(async (sql) => {
      const message = await this.messageOf(sql, event);
      if (!message || message.userIds.length === 0) return 0;
      const body = JSON.stringify({ type: message.type, timestamp: event.occurredAt, data: message.data });
      return sql.execute(
        `INSERT INTO ${SCHEMA}.webhook_deliveries (delivery_id, endpoint_id, message_id, event_type, payload, status, attempts_left, next_attempt_at)
         SELECT nextval('${SCHEMA}.webhook_delivery_ids'), e.endpoint_id, $1, $2, $3, 'pending', $4, now()
           FROM ${SCHEMA}.webhook_endpoints e
          WHERE e.user_id = ANY($5::int[]) AND e.deleted_at IS NULL AND e.enabled AND $2 = ANY(e.event_types)
         ON CONFLICT (endpoint_id, message_id) DO NOTHING`,
        [
          `msg_${event.eventId}`,
          message.type,
          body,
          this.settings.retryScheduleMs.length + 1,
          message.userIds,
        ],
      );
    });
    if (added > 0) this.dispatcher.wake();
  }

  private async messageOf(sql: Sql, event: EnvelopeOf<Source>): Promise<Message | undefined> {
    switch (event.type) {
      case 'InstanceStateChanged': {
        const d = event.data;
        return {
          type: WEBHOOK_TYPE_OF[event.type],
          userIds: await this.ownerOf(sql, d.instanceId, event),
          data: {
            instance_id: d.instanceId,
            actual_status: d.actualStatus,
            status_msg: d.statusMsg,
            at: d.at,
          },
        };
      }
      case 'InstanceOutbid': {
        const d = event.data;
        return {
          type: WEBHOOK_TYPE_OF[event.type],
          userIds: await this.ownerOf(sql, d.instanceId, event),
          data: {
            instance_id: d.instanceId,
            machine_id: d.machineId,
            num_gpus: d.numGpus,
            reason: d.reason ?? 'outbid',
            at: d.at,
          },
        };
      }
      case 'CreditExhausted':
        return {
          type: WEBHOOK_TYPE_OF[event.type],
          userIds: [event.data.userId],
          data: { balance: dollars(event.data.balanceMicros), at: event.data.at },
        };
      case 'AccountCharged':
      case 'CreditGranted':
      case 'CreditReceived':
        return this.creditLow(sql, event);
      case 'SyncCompleted':
      case 'SyncFailed': {
        const d = event.data;
        const common = { instance_id: d.instanceId, job_id: d.jobId, at: d.at };
        const owner = await this.ownerOf(sql, d.instanceId, event);
        return event.type === 'SyncCompleted'
          ? {
              type: WEBHOOK_TYPE_OF[event.type],
              userIds: owner,
              data: { ...common, bytes_copied: event.data.bytesCopied },
            }
          : {
              type: WEBHOOK_TYPE_OF[event.type],
              userIds: owner,
              data: { ...common, reason: event.data.reason },
            };
      }
      case 'MaintenanceScheduled': {
        const d = event.data;
        const renters = await sql.query<{ owner_id: number }>(
          `SELECT DISTINCT owner_id FROM ${WEBHOOK_INSTANCE_OWNERS_TABLE} WHERE machine_id = $1 AND NOT destroyed`,
          [d.machineId],
        );
        return {
          type: WEBHOOK_TYPE_OF[event.type],
          userIds: [...new Set([d.ownerId, ...renters.map((r) => Number(r.owner_id))])],
          data: {
            machine_id: d.machineId,
            window_id: d.windowId,
            start_time: d.startTime,
            end_time: d.endTime,
            duration_hours: d.durationHours,
            category: d.category,
            at: d.at,
          },
        };
      }
    }
  }

  /**
   * The renter, as a list of at most one account. An instance not projected yet fails the item, which the
   * worker retries shortly; past OWNER_WAIT_MS after the event the owner is taken as unknowable (a store
   * upgraded without rebuilding webhook_instance_owners) and nobody is sent it, rather than parking the item
   * (which would mark the app not ready).
   */
  private async ownerOf(sql: Sql, instanceId: number, event: EnvelopeOf<Source>): Promise<number[]> {
    const [row] = await sql.query<{ owner_id: number }>(
      `SELECT owner_id FROM ${WEBHOOK_INSTANCE_OWNERS_TABLE} WHERE instance_id = $1`,
      [instanceId],
    );
    if (row) return [Number(row.owner_id)];
    if (Date.now() - Date.parse(event.occurredAt) > OWNER_WAIT_MS) {
      this.logger.warn(`no webhook for ${event.type} of instance ${instanceId}: its owner is not known`);
      return [];
    }
    throw new Error(`the owner of instance ${instanceId} is not known yet`);
  }

  /**
   * credit.low once per fall: a charge that leaves the balance under the threshold sends it unless the
   * account is already marked low; credit that lifts the balance to the threshold or above clears the mark.
   * Read from the user_credit read model once it has applied this very ledger event.
   */
  private async creditLow(
    sql: Sql,
    event: EnvelopeOf<AccountCharged | CreditGranted | CreditReceived>,
  ): Promise<Message | undefined> {
    const userId = event.data.userId;
    const [applied] = await sql.query<{ position: number }>(
      `SELECT position FROM ${SCHEMA}.projection_stream_positions WHERE projection = 'user_credit' AND stream_id = $1`,
      [event.streamId],
    );
    if (!applied || Number(applied.position) < event.streamPosition)
      throw new Error(`user_credit has not applied ${event.streamId}@${event.streamPosition} yet`);
    const [credit] = await sql.query<{ micros: string }>(
      `SELECT round(credit * 1000000)::text AS micros FROM ${USER_CREDIT_TABLE} WHERE user_id = $1`,
      [userId],
    );
    const balance = Number(credit?.micros ?? 0);
    if (balance >= this.settings.creditLowMicros) {
      await sql.execute(`DELETE FROM ${SCHEMA}.webhook_credit_low WHERE user_id = $1`, [userId]);
      return undefined;
    }
    if (event.type !== 'AccountCharged') return undefined;
    const marked = await sql.execute(
      `INSERT INTO ${SCHEMA}.webhook_credit_low (user_id, since) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING`,
      [userId, event.occurredAt],
    );
    if (marked === 0) return undefined;
    return {
      type: WEBHOOK_TYPE_OF[event.type],
      userIds: [userId],
      data: {
        balance: dollars(balance),
        threshold: dollars(this.settings.creditLowMicros),
        at: event.data.at,
      },
    };
  }
}
