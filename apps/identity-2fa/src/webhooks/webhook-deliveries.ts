import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';

/**
 * The delivery log of an endpoint, as its owner reads it: each message with its status and attempts. Not
 * a read model: the webhooks reactor and the delivery worker write these tables (docs/audit.md, Webhooks).
 */
export interface WebhookAttemptView {
  attempt: number;
  manual: boolean;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
}

export interface WebhookDeliveryView {
  id: number;
  endpoint_id: number;
  message_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  finished_at: number | null;
  last_attempt: WebhookAttemptView | null;
}

export interface WebhookDeliveryDetail extends WebhookDeliveryView {
  /** The body as sent (JSON): {type, timestamp, data}. */
  payload: unknown;
  attempt_log: WebhookAttemptView[];
}

interface DeliveryRow {
  delivery_id: string;
  endpoint_id: number;
  message_id: string;
  event_type: string;
  status: WebhookDeliveryView['status'];
  attempts: number;
  next_attempt_at: string | Date;
  created_at: string | Date;
  finished_at: string | Date | null;
  payload: string;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  manual: boolean;
  attempted_at: string | Date;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
}

const seconds = (at: string | Date) => new Date(at).getTime() / 1000;

const attemptView = (row: AttemptRow): WebhookAttemptView => ({
  attempt: Number(row.attempt),
  manual: row.manual,
  attempted_at: seconds(row.attempted_at),
  status_code: row.status_code === null ? null : Number(row.status_code),
  error: row.error,
  response_excerpt: row.response_excerpt,
  duration_ms: Number(row.duration_ms),
});

const deliveryView = (row: DeliveryRow, last: AttemptRow | undefined): WebhookDeliveryView => ({
  id: Number(row.delivery_id),
  endpoint_id: Number(row.endpoint_id),
  message_id: row.message_id,
  event_type: row.event_type,
  status: row.status,
  attempts: Number(row.attempts),
  next_attempt_at: row.status === 'pending' ? seconds(row.next_attempt_at) : null,
  created_at: seconds(row.created_at),
  finished_at: row.finished_at === null ? null : seconds(row.finished_at),
  last_attempt: last ? attemptView(last) : null,
});

const DELIVERY_COLUMNS = `delivery_id::text, endpoint_id, message_id, event_type, status, attempts, next_attempt_at, created_at, finished_at, payload`;

/** The endpoint's deliveries, newest first, `limit` of them before the id `before` (if given). */
export async function listWebhookDeliveries(
  db: Sql,
  endpointId: number,
  limit: number,
  before?: number,
): Promise<WebhookDeliveryView[]> {
  const rows = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM ${SCHEMA}.webhook_deliveries
      WHERE endpoint_id = $1 AND ($2::bigint IS NULL OR delivery_id < $2::bigint)
      ORDER BY delivery_id DESC LIMIT $3`,
    [endpointId, before ?? null, limit],
  );
  if (rows.length === 0) return [];
  const lasts = await db.query<AttemptRow>(
    `SELECT DISTINCT ON (delivery_id) delivery_id::text, attempt, manual, attempted_at, status_code, error, response_excerpt, duration_ms
       FROM ${SCHEMA}.webhook_attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id, attempt DESC`,
    [rows.map((r) => r.delivery_id)],
  );
  const byDelivery = new Map(lasts.map((a) => [a.delivery_id, a]));
  return rows.map((row) => deliveryView(row, byDelivery.get(row.delivery_id)));
}

export async function findWebhookDelivery(
  db: Sql,
  endpointId: number,
  deliveryId: number,
): Promise<WebhookDeliveryDetail | null> {
  const [row] = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM ${SCHEMA}.webhook_deliveries WHERE endpoint_id = $1 AND delivery_id = $2`,
    [endpointId, deliveryId],
  );
  if (!row) return null;
  const attempts = await db.query<AttemptRow>(
    `SELECT delivery_id::text, attempt, manual, attempted_at, status_code, error, response_excerpt, duration_ms
       FROM ${SCHEMA}.webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
    [deliveryId],
  );
  return {
    ...deliveryView(row, attempts[attempts.length - 1]),
    payload: JSON.parse(row.payload) as unknown,
    attempt_log: attempts.map(attemptView),
  };
}

/**
 * Sends the delivery again now: one attempt (a pending one keeps the retries it had left). Answers
 * whether the delivery exists on that endpoint.
 */
export async function requeueWebhookDelivery(
  db: Sql,
  endpointId: number,
  deliveryId: number,
): Promise<boolean> {
  const changed = await db.execute(
    `UPDATE ${SCHEMA}.webhook_deliveries
        SET attempts_left = CASE WHEN status = 'pending' THEN GREATEST(attempts_left, 1) ELSE 1 END,
            status = 'pending', manual = true, next_attempt_at = now(), finished_at = NULL
      WHERE endpoint_id = $1 AND delivery_id = $2`,
    [endpointId, deliveryId],
  );
  return changed > 0;
}

/**
 * The log's retention: finished deliveries older than `retentionDays`, and every delivery of an endpoint
 * deleted that long ago (its pending ones would never be sent). Answers how many were deleted.
 */
export async function sweepWebhookLog(db: Sql, retentionDays: number): Promise<number> {
  const days = String(retentionDays);
  const finished = await db.execute(
    `DELETE FROM ${SCHEMA}.webhook_deliveries WHERE status <> 'pending' AND finished_at < now() - ($1 || ' days')::interval`,
    [days],
  );
  const orphaned = await db.execute(
    `DELETE FROM ${SCHEMA}.webhook_deliveries d USING ${SCHEMA}.webhook_endpoints e
      WHERE e.endpoint_id = d.endpoint_id AND e.deleted_at < now() - ($1 || ' days')::interval`,
    [days],
  );
  return finished + orphaned;
}
