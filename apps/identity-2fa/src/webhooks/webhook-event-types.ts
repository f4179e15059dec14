/**
 * What an endpoint can subscribe to: the webhook event types, each named `<object>.<what happened>`, with
 * the platform events behind it (docs/api.md, Webhooks). An endpoint lists the types it wants; a name not
 * listed here is refused with 400 `invalid_webhook`.
 */
export const WEBHOOK_EVENT_TYPES = {
  'instance.state_changed':
    "One of the account's instances changed state on its host (loading, running, stopped, exited, offline...)",
  'instance.outbid':
    "One of the account's instances lost its GPUs: a higher bid took them, or the account ran out of credit",
  'credit.low': "The account's credit fell below the low-credit threshold after a charge",
  'credit.exhausted': "The account's credit reached zero: its instances are stopped",
  'sync.completed': "A copy into one of the account's instances finished",
  'sync.failed': "A copy into one of the account's instances failed",
  'maintenance.scheduled':
    'A maintenance window was scheduled on a machine the account owns or rents an instance on',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

export function isWebhookEventType(name: unknown): name is WebhookEventType {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_TYPES, name);
}
