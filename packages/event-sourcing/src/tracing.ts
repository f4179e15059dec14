import type { EventEnvelope } from '@rigmarket/contracts';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';

/**
 * Trace context across the platform (docs/operations.md, Traces). Only the OpenTelemetry API is used here:
 * until a process starts the SDK (http-kit's startTracingFromEnvironment) it has no propagator and no
 * tracer, and every helper below returns at once without creating anything.
 */
export function tracingActive(): boolean {
  return propagation.fields().length > 0;
}

const tracer = () => trace.getTracer('rigmarket');

/** The active context as a W3C `traceparent`, or undefined (tracing off, or no span active). */
export function currentTraceparent(active: Context = context.active()): string | undefined {
  if (!tracingActive() || !trace.getSpan(active)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` names (a remote parent), or the root context. */
export function contextOf(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

function finish(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error).slice(0, 500) });
  }
  span.end();
}

/** Runs `work` in a span that is a child of the active context (or of `parent`'s traceparent when given). */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; parent?: string; attributes?: Attributes },
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingActive()) return work();
  const parent = options.parent !== undefined ? contextOf(options.parent) : context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), work);
    finish(span);
    return result;
  } catch (error) {
    finish(span, error);
    throw error;
  }
}

/**
 * One CONSUMER span per delivered event that carries a trace context, each a child of its event's context,
 * all covering `work` (a batch applied in one transaction shows in each event's trace).
 */
export async function consumeSpans<T>(
  name: string,
  envelopes: readonly EventEnvelope[],
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingActive()) return work();
  const parents = [...new Set(envelopes.map((e) => e.traceparent).filter((t) => t !== undefined))];
  if (parents.length === 0) return work();
  const spans = parents.map((traceparent) =>
    tracer().startSpan(
      name,
      {
        kind: SpanKind.CONSUMER,
        attributes: { ...attributes, 'messaging.batch.message_count': envelopes.length },
      },
      contextOf(traceparent),
    ),
  );
  try {
    // Work done inside (a reactor's command) continues the first event's trace.
    const result = await context.with(trace.setSpan(contextOf(parents[0]), spans[0]!), work);
    for (const span of spans) finish(span);
    return result;
  } catch (error) {
    for (const span of spans) finish(span, error);
    throw error;
  }
}

/**
 * PRODUCER spans for messages leaving the outbox: each a child of its event's stored context; the message
 * then carries the producer span's context, so the consumer's span is its child. Returns the messages to
 * send and a function that ends the spans once the transport acknowledged them (or failed).
 */
export function produceSpans<M extends { topic: string; envelope: EventEnvelope }>(
  messages: readonly M[],
): { messages: M[]; end: (error?: unknown) => void } {
  if (!tracingActive() || messages.every((m) => m.envelope.traceparent === undefined))
    return { messages: [...messages], end: () => undefined };
  const spans: Span[] = [];
  const sent = messages.map((m) => {
    if (m.envelope.traceparent === undefined) return m;
    const parent = contextOf(m.envelope.traceparent);
    const span = tracer().startSpan(
      `publish ${m.topic}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.destination.name': m.topic,
          'messaging.message.id': m.envelope.eventId,
          'rigmarket.event.type': m.envelope.type,
        },
      },
      parent,
    );
    spans.push(span);
    return {
      ...m,
      envelope: { ...m.envelope, traceparent: currentTraceparent(trace.setSpan(parent, span)) },
    };
  });
  return { messages: sent, end: (error?: unknown) => spans.forEach((span) => finish(span, error)) };
}

export { SpanKind };
