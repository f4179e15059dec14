import type { EventEnvelope } from '@rigmarket/contracts';
import type { Projection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { AUDITED_TYPES, AUDIT_SOURCES } from './audited-events';
import { auditArgs } from './redact';

/**
 * Whose action it was: the caller's account, or for a login (no key yet) the account logging in, or for an
 * endpoint the delivery worker disabled (no caller) the endpoint's owner.
 */
function accountOf(event: EventEnvelope): number | null {
  const actor = event.metadata.actor?.userId;
  if (typeof actor === 'number') return actor;
  const data = event.data as { userId?: unknown } | null;
  if (
    (event.type === 'UserLoggedIn' ||
      event.type === 'TfaLoginCompleted' ||
      event.type === 'TfaVerificationFailed' ||
      event.type === 'UserRegistered' ||
      event.type === 'UserEmailVerified' ||
      event.type === 'WebhookEndpointDisabled') &&
    typeof data?.userId === 'number'
  )
    return data.userId;
  return null;
}

const types = new Set(AUDITED_TYPES);

/** The row an audited event writes (null: not an action of an account), in the columns' order. */
function auditRow(event: EventEnvelope): unknown[] | null {
  if (!types.has(event.type)) return null;
  const userId = accountOf(event);
  if (userId === null) return null;
  const { metadata } = event;
  return [
    event.context,
    event.globalPosition,
    userId,
    metadata.actor?.apiKeyId ?? null,
    metadata.origin?.ip ?? null,
    metadata.origin?.route ?? null,
    event.type,
    event.streamId,
    JSON.stringify(auditArgs(event.data)),
    metadata.correlationId || null,
    event.occurredAt,
  ];
}

const COLUMNS = `context, global_position, user_id, api_key_id, ip_address, api_route, event_type, object, args,
                 correlation_id, created_at`;
const COLUMN_TYPES = [
  'text',
  'bigint',
  'int',
  'int',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
  'text',
  'timestamptz',
];

/**
 * The audit log: each important action of an account (audited-events.ts), with who (account, key), from
 * where (address, route), what (event, object, args without secrets), when, and the correlation id that ties
 * it to the request and to everything that request caused. identity's own events inline; the other
 * contexts' through the transport. An event with no account behind it (a timer, a host) is not an action.
 * A delivered batch is one INSERT (a row per audited event; an event applied before is skipped by its key).
 */
export const auditLogProjection: Projection = {
  name: 'audit_log',
  version: 1,
  sources: AUDIT_SOURCES,
  tables: [`${SCHEMA}.audit_log`],
  eventTypes: AUDITED_TYPES,
  async apply(sql, event) {
    const row = auditRow(event);
    if (row === null) return;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.audit_log (${COLUMNS})
       VALUES (${COLUMN_TYPES.map((type, i) => `$${i + 1}::${type}`).join(', ')})
       ON CONFLICT (context, global_position) DO NOTHING`,
      row,
    );
  },
  async applyBatch(sql, events) {
    const rows = events.map(auditRow).filter((row): row is unknown[] => row !== null);
    if (rows.length === 0) return;
    const columns = COLUMN_TYPES.map((_, i) => rows.map((row) => row[i]));
    await sql.execute(
      `INSERT INTO ${SCHEMA}.audit_log (${COLUMNS})
       SELECT * FROM unnest(${COLUMN_TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})
       ON CONFLICT (context, global_position) DO NOTHING`,
      columns,
    );
  },
};
