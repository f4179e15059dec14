import type { INestApplication } from '@nestjs/common';
import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';

export interface Route {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  path: string;
  /** Needs a key (not @Public(), not one of OPEN_ROUTES): an anonymous caller must get 401/403. */
  guarded: boolean;
}

const VERBS: Partial<Record<RequestMethod, Route['method']>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.DELETE]: 'delete',
  [RequestMethod.PATCH]: 'patch',
};

/** Routes open to anyone without @Public(): liveness, readiness and uploaded log extracts (result_url). */
const OPEN_ROUTES = new Set(['get /healthz', 'get /readyz', 'get /logs/:file']);

const asList = (value: unknown): string[] =>
  value === undefined ? [''] : Array.isArray(value) ? value.map(String) : [String(value)];
const join = (...parts: string[]) =>
  `/${parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;

/** Every handler of every controller, with its HTTP method, path(s) and whether it needs a key. */
export function routesOf(app: INestApplication): Route[] {
  const routes: Route[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!type) continue;
      const prefixes = asList(Reflect.getMetadata('path', type));
      const proto = type.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const verb = Reflect.getMetadata('method', handler) as RequestMethod | undefined;
        const paths = Reflect.getMetadata('path', handler) as unknown;
        if (verb === undefined || paths === undefined || !VERBS[verb]) continue;
        // `true`, or 'identifies' for a public route that still names a caller who sends a key.
        const isPublic = Boolean(Reflect.getMetadata('rigmarket:public', handler));
        for (const prefix of prefixes)
          for (const path of asList(paths))
            routes.push({
              method: VERBS[verb],
              path: join(prefix, path),
              guarded: !isPublic && !OPEN_ROUTES.has(`${VERBS[verb]} ${join(prefix, path)}`),
            });
      }
    }
  }
  return routes;
}
