import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** One row of `GET /api/v0/audit_logs/`, with the fields the vastai CLI shows (ip_address ... args). */
export interface AuditLogEntry {
  /** `<context>-<position>`: where the event behind the row is stored. */
  id: string;
  user_id: number;
  api_key_id: number | null;
  ip_address: string | null;
  /** Unix seconds. */
  created_at: number;
  api_route: string | null;
  /** What happened: the event's type, the object it changed and its payload without secrets. */
  action: string;
  object: string;
  args: Record<string, unknown>;
  correlation_id: string | null;
}

/** Where the next page starts: the last row's (created_at, context, position), opaque to clients. */
export interface AuditCursor {
  createdAt: string;
  context: string;
  position: string;
}

export function encodeCursor(cursor: AuditCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.context, cursor.position])).toString(
    'base64url',
  );
}

/** A cursor from a query string, or null when it is not one this server wrote. */
export function decodeCursor(text: string): AuditCursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      !Array.isArray(value) ||
      value.length !== 3 ||
      typeof value[0] !== 'string' ||
      Number.isNaN(Date.parse(value[0])) ||
      typeof value[1] !== 'string' ||
      typeof value[2] !== 'string' ||
      !/^\d{1,19}$/.test(value[2])
    )
      return null;
    return { createdAt: value[0], context: value[1], position: value[2] };
  } catch {
    return null;
  }
}

interface AuditRow {
  context: string;
  global_position: string;
  user_id: number;
  api_key_id: number | null;
  ip_address: string | null;
  api_route: string | null;
  event_type: string;
  object: string;
  args: Record<string, unknown> | string;
  correlation_id: string | null;
  created_at: Date | string;
}

/** An account's audit log, newest first, `limit` rows after `before` (keyset pagination). */
export async function listAuditLog(
  db: Sql,
  userId: number,
  limit: number,
  before: AuditCursor | null,
): Promise<{ entries: AuditLogEntry[]; next: AuditCursor | null }> {
  const params: unknown[] = [userId, limit + 1];
  let after = '';
  if (before) {
    params.push(before.createdAt, before.context, before.position);
    after = `AND (created_at, context, global_position) < ($3::timestamptz, $4, $5::bigint)`;
  }
  const rows = await db.query<AuditRow>(
    `SELECT context, global_position::text AS global_position, user_id, api_key_id, ip_address, api_route,
            event_type, object, args, correlation_id, created_at
       FROM ${SCHEMA}.audit_log
      WHERE user_id = $1 ${after}
      ORDER BY created_at DESC, context DESC, global_position DESC
      LIMIT $2`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    entries: page.map((row) => ({
      id: `${row.context}-${row.global_position}`,
      user_id: Number(row.user_id),
      api_key_id: row.api_key_id === null ? null : Number(row.api_key_id),
      ip_address: row.ip_address,
      created_at: new Date(row.created_at).getTime() / 1000,
      api_route: row.api_route,
      action: row.event_type,
      object: row.object,
      args: typeof row.args === 'string' ? (JSON.parse(row.args) as Record<string, unknown>) : row.args,
      correlation_id: row.correlation_id,
    })),
    next:
      rows.length > limit && last
        ? {
            createdAt: new Date(last.created_at).toISOString(),
            context: last.context,
            position: last.global_position,
          }
        : null,
  };
}

/** One address an account's actions came from (`vastai show ipaddrs`). */
export interface IpAddressSeen {
  ip: string;
  /** Unix seconds of the first and last action from it. */
  first_seen: number;
  last_seen: number;
  actions: number;
  /** No geolocation database here. */
  first_location: null;
}

/** The client addresses of the account's audited actions, first seen first (at most 1000). */
export async function listIpAddresses(sql: Sql, userId: number): Promise<IpAddressSeen[]> {
  const rows = await sql.query<{
    ip: string;
    first_seen: Date | string;
    last_seen: Date | string;
    n: string;
  }>(
    `SELECT ip_address AS ip, min(created_at) AS first_seen, max(created_at) AS last_seen, count(*) AS n
       FROM ${SCHEMA}.audit_log WHERE user_id = $1 AND ip_address IS NOT NULL
      GROUP BY ip_address ORDER BY min(created_at), ip_address LIMIT 1000`,
    [userId],
  );
  return rows.map((r) => ({
    ip: r.ip,
    first_seen: new Date(r.first_seen).getTime() / 1000,
    last_seen: new Date(r.last_seen).getTime() / 1000,
    actions: Number(r.n),
    first_location: null,
  }));
}
