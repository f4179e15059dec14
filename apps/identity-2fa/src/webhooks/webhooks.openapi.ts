import {
  anyValue,
  arrayOf,
  bool,
  int,
  namedSchema,
  nullable,
  num,
  objectOf,
  str,
  succeeded,
} from '@rigmarket/http-kit';
import { WEBHOOK_EVENT_TYPE_NAMES } from './webhook-event-types';

/** The webhooks routes' wire contract for the OpenAPI document (docs/api.md, Webhooks). */

const EVENT_TYPE = { type: 'string', enum: [...WEBHOOK_EVENT_TYPE_NAMES] };

export const WEBHOOK_ENDPOINT = namedSchema(
  'WebhookEndpoint',
  objectOf({
    id: int,
    url: str,
    event_types: arrayOf(EVENT_TYPE),
    description: nullable(str),
    enabled: bool,
    disabled_reason: nullable({ type: 'string', enum: ['requested', 'failing'] }),
    consecutive_failures: int,
    created_at: num,
    updated_at: num,
  }),
);

const ATTEMPT = namedSchema(
  'WebhookAttempt',
  objectOf({
    attempt: int,
    manual: bool,
    attempted_at: num,
    status_code: nullable(int),
    error: nullable(str),
    response_excerpt: nullable(str),
    duration_ms: int,
  }),
);

const DELIVERY_FIELDS = {
  id: int,
  endpoint_id: int,
  message_id: str,
  event_type: str,
  status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
  attempts: int,
  next_attempt_at: nullable(num),
  created_at: num,
  finished_at: nullable(num),
  last_attempt: nullable(ATTEMPT),
};

export const WEBHOOK_DELIVERY = namedSchema('WebhookDelivery', objectOf(DELIVERY_FIELDS));

export const WEBHOOK_DELIVERY_DETAIL = namedSchema(
  'WebhookDeliveryDetail',
  objectOf({ ...DELIVERY_FIELDS, payload: anyValue, attempt_log: arrayOf(ATTEMPT) }),
);

export const WEBHOOK_BODIES = {
  create: objectOf({ url: str, event_types: arrayOf(EVENT_TYPE), description: nullable(str) }, [
    'url',
    'event_types',
  ]),
  update: objectOf(
    { url: str, event_types: arrayOf(EVENT_TYPE), description: nullable(str), enabled: bool },
    [],
  ),
} as const;

export const WEBHOOK_ANSWERS = {
  eventTypes: succeeded({ event_types: arrayOf(objectOf({ name: EVENT_TYPE, description: str })) }),
  endpoints: succeeded({ endpoints: arrayOf(WEBHOOK_ENDPOINT) }),
  endpoint: succeeded({ endpoint: WEBHOOK_ENDPOINT }),
  created: succeeded({
    endpoint: WEBHOOK_ENDPOINT,
    secret: { type: 'string', description: 'whsec_<base64>: shown once, keep it to check signatures' },
  }),
  secret: succeeded({ secret: str }),
  msg: succeeded({ msg: str }),
  deliveries: succeeded({ deliveries: arrayOf(WEBHOOK_DELIVERY) }),
  delivery: succeeded({ delivery: WEBHOOK_DELIVERY_DETAIL }),
} as const;
