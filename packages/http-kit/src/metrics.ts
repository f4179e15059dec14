import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { metricsRegistry } from '@rigmarket/event-sourcing';
import type { Express, NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Histogram } from 'prom-client';

/** Metadata on a context's Nest module (contextModule): the context its controllers' routes belong to. */
export const CONTEXT_METADATA = 'rigmarket:context';

export const httpRequestDuration = new Histogram({
  name: 'rigmarket_http_request_duration_seconds',
  help: 'HTTP requests by context, method, route pattern and status (its _count is the request rate)',
  labelNames: ['context', 'method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

/** The label of a request no route matched (a 404, a refused body): one series, not one per URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const trimSlashes = (path: string) => `/${path.replace(/^\/+|\/+$/g, '')}`;

/** `<method> <route pattern>` -> context, from the context modules' controllers. */
function routeContexts(app: INestApplication): Map<string, string> {
  const found = new Map<string, string>();
  const asList = (value: unknown): string[] =>
    value === undefined ? [''] : Array.isArray(value) ? value.map(String) : [String(value)];
  for (const module of app.get(ModulesContainer).values()) {
    const context = module.metatype
      ? (Reflect.getMetadata(CONTEXT_METADATA, module.metatype) as string | undefined)
      : undefined;
    if (!context) continue;
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!type) continue;
      const proto = type.prototype as Record<string, unknown>;
      for (const prefix of asList(Reflect.getMetadata('path', type)))
        for (const name of Object.getOwnPropertyNames(proto)) {
          const handler = proto[name];
          if (name === 'constructor' || typeof handler !== 'function') continue;
          const paths = Reflect.getMetadata('path', handler) as unknown;
          if (paths === undefined || Reflect.getMetadata('method', handler) === undefined) continue;
          for (const path of asList(paths)) found.set(trimSlashes(`${prefix}/${path}`), context);
        }
    }
  }
  return found;
}

/**
 * Times every request into rigmarket_http_request_duration_seconds. The route label is the matched route's
 * pattern (`/api/v0/instances/:id`), never the raw URL, so the series stay bounded; the context is the one
 * whose module declares the route (`none` for the platform's own: health, docs, metrics).
 */
export function httpMetricsMiddleware(app: INestApplication) {
  let contexts: Map<string, string> | undefined;
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const pattern = (req as { route?: { path?: unknown } }).route?.path;
      // Nest's catch-all for a path no route has (`/{*path}`) is "unmatched" too.
      const route =
        typeof pattern === 'string' && !pattern.includes('{*') ? trimSlashes(pattern) : UNMATCHED_ROUTE;
      contexts ??= routeContexts(app);
      httpRequestDuration.observe(
        {
          context: contexts.get(route) ?? 'none',
          method: req.method,
          route,
          status: String(res.statusCode),
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };
}

let defaultMetrics = false;

/**
 * `GET /metrics`: the process's registry in Prometheus' text format, outside the API (no key needed, not in
 * the OpenAPI document; the edge does not route it: docs/operations.md, Metrics). It holds counts, timings
 * and names of routes, contexts and read models only: no ids, keys or request data.
 */
export function serveMetrics(app: INestApplication): void {
  if (!defaultMetrics) {
    // Node's own (CPU, memory, event loop delay, GC), once per process.
    collectDefaultMetrics({ register: metricsRegistry });
    defaultMetrics = true;
  }
  const http = app.getHttpAdapter().getInstance() as Express;
  http.get('/metrics', (_req: Request, res: Response, next: NextFunction) => {
    metricsRegistry
      .metrics()
      .then((text) => res.type(metricsRegistry.contentType).send(text))
      .catch(next);
  });
}
