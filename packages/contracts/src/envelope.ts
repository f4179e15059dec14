/** What domain code sees: a tiny, JSON-safe event. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

export interface Actor {
  userId?: number;
  apiKeyId?: number;
}

/** Where a request came from, for the audit log: the client's address and the HTTP route it called. */
export interface RequestOrigin {
  ip?: string;
  /** Method and path, without the query string (it may carry a key): `PUT /api/v0/asks/1001/`. */
  route?: string;
}

export interface EventMetadata {
  /** Carried unchanged from the first request of a conversation. */
  correlationId: string;
  /** Id of the command or event that caused this one. */
  causationId: string;
  actor?: Actor;
  origin?: RequestOrigin;
  traceparent?: string;
}

/** What storage, transports and projections see. */
export interface EventEnvelope<E extends DomainEvent = DomainEvent> {
  eventId: string;
  type: E['type'];
  schemaVersion: number;
  streamId: string;
  streamType: string;
  /** 1-based version within the stream. */
  streamPosition: number;
  /** Store-assigned bigint, as a string; replay order within one context. */
  globalPosition: string;
  /** ISO-8601, from the command's injected clock. */
  occurredAt: string;
  /** The bounded context whose store holds the event. */
  context: ContextName;
  data: E['data'];
  metadata: EventMetadata;
  /**
   * The W3C trace context (`traceparent`) of the work that appended it, only while tracing is on: it rides
   * in the outbox row and the Kafka message's headers so that consumers continue the trace. Never stored with
   * the event, hashed or exported.
   */
  traceparent?: string;
}

export type ContextName = 'identity' | 'marketplace' | 'instance' | 'sync';

/** The Postgres schema each context owns. */
export const CONTEXT_SCHEMAS: Record<ContextName, string> = {
  identity: 'identity',
  marketplace: 'marketplace',
  instance: 'instance_lifecycle',
  sync: 'sync_maintenance',
};

/** `instance-4711` -> `instance`: the category is the text before the first '-'. */
export function streamTypeOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}
