import type { IncomingMessage } from 'node:http';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Whether this process should trace (docs/operations.md, Traces): off unless an exporter is asked for with
 * the standard variables (OTEL_TRACES_EXPORTER other than `none`, OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or RIGMARKET_TRACING=1 (OTLP to the default local collector);
 * OTEL_SDK_DISABLED=true wins over all of them.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return (
    exporters.length > 0 ||
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ||
    env.RIGMARKET_TRACING === '1'
  );
}

/**
 * Query parameters whose values never reach a span (older clients send the API key as `?api_key=`): the
 * instrumentation's own list (signed URLs) and ours, as redactUrl masks them in the logs.
 */
export const REDACTED_QUERY_PARAMS = [
  'api_key',
  'Authorization',
  'key',
  'secret',
  'token',
  'password',
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
];

let running: NodeSDK | undefined;

/**
 * Starts OpenTelemetry's Node SDK once per process: HTTP server and client spans (named after the matched
 * route), W3C trace context propagation, and the exporter the OTEL_* variables choose (OTLP by default;
 * `console` prints spans). Only traces: metrics are prom-client's (/metrics) and logs stay pino's.
 * `spanProcessors` replaces the exporter from the environment (a test's in-memory exporter).
 */
export async function startTracing(options: {
  serviceName: string;
  spanProcessors?: SpanProcessor[];
}): Promise<NodeSDK> {
  if (running) return running;
  // Loaded only here: a process that does not trace never loads the SDK.
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? options.serviceName,
    spanProcessors: options.spanProcessors,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // The route pattern once Express matched it (`PUT /api/v0/asks/:offerId`), never the raw URL.
        applyCustomAttributesOnSpan: (span, request) => {
          const route = (request as IncomingMessage & { route?: { path?: unknown } }).route?.path;
          if (typeof route === 'string' && !route.includes('{*')) {
            span.setAttribute('http.route', route);
            span.updateName(`${(request as IncomingMessage).method ?? 'HTTP'} ${route}`);
          }
        },
        redactedQueryParams: REDACTED_QUERY_PARAMS,
        redactedQueryParamsServer: REDACTED_QUERY_PARAMS,
        // Probes and scrapes are not traced.
        ignoreIncomingRequestHook: (request) => /^\/(metrics|healthz|readyz)\b/.test(request.url ?? ''),
      }),
    ],
  });
  sdk.start();
  // The instrumentation patches `http` when it is next required: the servers created after this see it.
  await import('node:http');
  running = sdk;
  return sdk;
}

/** Starts tracing when the environment asks for it (tracingWanted); otherwise nothing is loaded or started. */
export async function startTracingFromEnvironment(serviceName: string): Promise<NodeSDK | undefined> {
  return tracingWanted() ? startTracing({ serviceName }) : undefined;
}

/** Flushes and stops the SDK (at shutdown), if it was started. */
export async function stopTracing(): Promise<void> {
  const sdk = running;
  running = undefined;
  await sdk?.shutdown().catch(() => undefined);
}
