import { ApiError, type EventEnvelope, redactSecrets } from '@rigmarket/contracts';
import {
  type JsonSchema,
  arrayOf,
  int,
  namedSchema,
  nullable,
  num,
  objectOf,
  str,
  succeeded,
} from './openapi-contract';

/** One event of an object's history, as `GET .../{id}/history/` shows it. */
export interface HistoryEntry {
  /** 1-based position in the object's stream. */
  position: number;
  type: string;
  /** Unix seconds. */
  at: number;
  /** Who caused it (null: the platform itself, a timer or a host). */
  user_id: number | null;
  api_key_id: number | null;
  correlation_id: string | null;
  /** The event's payload without secrets (redactSecrets). */
  payload: unknown;
}

export function historyEntries(events: readonly EventEnvelope[]): HistoryEntry[] {
  return events.map((event) => ({
    position: event.streamPosition,
    type: event.type,
    at: Date.parse(event.occurredAt) / 1000,
    user_id: event.metadata.actor?.userId ?? null,
    api_key_id: event.metadata.actor?.apiKeyId ?? null,
    correlation_id: event.metadata.correlationId || null,
    payload: redactSecrets(event.data),
  }));
}

/**
 * `?as_of=<unix seconds>` as milliseconds; undefined when absent. Anything but a finite, non-negative
 * number of seconds is a 400.
 */
export function asOfMillis(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 1e11)
    throw new ApiError(400, 'invalid_args', 'as_of must be a time in Unix seconds');
  return Math.floor(seconds * 1000);
}

/**
 * The answer of a `.../{id}/history/` route: the object's events, and with `?as_of=` only those up to then
 * plus the state they had made (as_of, version, state).
 */
export function historyAnswer(found: { events: readonly EventEnvelope[]; state: unknown }, asOfMs?: number) {
  return {
    success: true,
    history: historyEntries(found.events),
    ...(asOfMs === undefined
      ? {}
      : { as_of: asOfMs / 1000, version: found.events.length, state: redactSecrets(found.state) }),
  };
}

/** The answer to an as-of read: the object's state folded from its events up to then, without secrets. */
export function asOfAnswer(asOfMs: number, events: readonly EventEnvelope[], state: unknown) {
  return { success: true, as_of: asOfMs / 1000, version: events.length, state: redactSecrets(state) };
}

export const HISTORY_ANSWER: JsonSchema = succeeded(
  {
    as_of: num,
    version: {
      type: 'integer',
      description: 'With as_of: how many of the object’s events had happened by then',
    },
    state: {
      type: 'object',
      description: 'With as_of: the object as its events had made it then, without secrets',
    },
    history: arrayOf(
      namedSchema(
        'HistoryEntry',
        objectOf({
          position: int,
          type: str,
          at: num,
          user_id: nullable(int),
          api_key_id: nullable(int),
          correlation_id: nullable(str),
          payload: { description: 'The event payload without secrets' },
        }),
      ),
    ),
  },
  ['history'],
);

export const AS_OF_ANSWER: JsonSchema = namedSchema('AsOfState', {
  ...succeeded({
    as_of: num,
    version: { type: 'integer', description: 'How many of the object’s events had happened by then' },
    state: { type: 'object', description: 'The object as its events had made it by then, without secrets' },
  }),
  // The answer only `?as_of=` asks for: the route's usual answer is the other alternative.
  'x-only-with-query': 'as_of',
});

export const AS_OF_QUERY: Record<string, JsonSchema> = {
  as_of: {
    type: 'number',
    minimum: 0,
    description: 'Unix seconds: the object as it was then (its events folded)',
  },
};
