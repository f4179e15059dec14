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

/**
 * The audit log: each important action of an account (audited-events.ts), with who (account, key), from
 * where (address, route), what (event, object, args without secrets), when, and the correlation id that ties
 * it to the request and to everything that request caused. identity's own events inline; the other
 * contexts' through the transport. An event with no account behind it (a timer, a host) is not an action.
 */
export const auditLogProjection: Projection = {
  name: 'audit_log',
  version: 1,
  sources: AUDIT_SOURCES,
  tables: [`${SCHEMA}.audit_log`],
  eventTypes: AUDITED_TYPES,
  async apply(sql, event) {
    if (!types.has(event.type)) return;
    const userId = accountOf(event);
    if (userId === null) return;
    const { metadata } = event;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.audit_log (context, global_position, user_id, api_key_id, ip_address, api_route,
                                       event_type, object, args, correlation_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (context, global_position) DO NOTHING`,
      [
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
      ],
    );
  },
};
