import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const WEBHOOK_ENDPOINTS_TABLE = `${SCHEMA}.webhook_endpoints`;

/** An endpoint as the API shows it: never its secret. */
export interface WebhookEndpointView {
  id: number;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  /** Why it is disabled: `requested` (its owner) or `failing` (too many failed attempts in a row). */
  disabled_reason: string | null;
  /** Failed attempts since the last success. */
  consecutive_failures: number;
  created_at: number;
  updated_at: number;
}

interface Row {
  endpoint_id: number;
  url: string;
  event_types: string[] | string;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const seconds = (at: string | Date) => new Date(at).getTime() / 1000;

/** PGlite and pg both answer text[] as an array; a driver that answers `{a,b}` is read too. */
const textArray = (value: string[] | string): string[] =>
  Array.isArray(value)
    ? value
    : value
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean);

const view = (row: Row): WebhookEndpointView => ({
  id: Number(row.endpoint_id),
  url: row.url,
  event_types: textArray(row.event_types),
  description: row.description,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  consecutive_failures: Number(row.consecutive_failures ?? 0),
  created_at: seconds(row.created_at),
  updated_at: seconds(row.updated_at),
});

const SELECT = `SELECT e.endpoint_id, e.url, e.event_types, e.description, e.enabled, e.disabled_reason,
  h.consecutive_failures, e.created_at, e.updated_at
  FROM ${WEBHOOK_ENDPOINTS_TABLE} e LEFT JOIN ${SCHEMA}.webhook_endpoint_health h ON h.endpoint_id = e.endpoint_id`;

export async function listWebhookEndpoints(db: Sql, userId: number): Promise<WebhookEndpointView[]> {
  const rows = await db.query<Row>(
    `${SELECT} WHERE e.user_id = $1 AND e.deleted_at IS NULL ORDER BY e.endpoint_id`,
    [userId],
  );
  return rows.map(view);
}

/** The caller's live endpoint, or null (another account's and a deleted one alike). */
export async function findWebhookEndpoint(
  db: Sql,
  userId: number,
  endpointId: number,
): Promise<WebhookEndpointView | null> {
  const rows = await db.query<Row>(
    `${SELECT} WHERE e.endpoint_id = $1 AND e.user_id = $2 AND e.deleted_at IS NULL`,
    [endpointId, userId],
  );
  return rows[0] ? view(rows[0]) : null;
}
