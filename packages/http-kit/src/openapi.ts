import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { routesOf } from './routes';

/** Where every app serves its OpenAPI document (docs/api.md, "The OpenAPI document"). */
export const OPENAPI_PATHS = ['/api/v0/openapi.json', '/openapi.json'] as const;

const ERROR_SCHEMA = {
  type: 'object',
  description: 'The Error object every failed request answers with.',
  required: ['success', 'error', 'msg'],
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string', description: 'A stable code, e.g. invalid_key, not_found, bad_request' },
    msg: { type: 'string', description: 'What went wrong, for a person' },
  },
};

const OPERATIONS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * The OpenAPI 3.1.0 description of the routes the app serves, generated from its controllers (and the
 * DTOs they declare) by @nestjs/swagger: version 1.0.0, the Bearer scheme required everywhere but on
 * public routes, and the Error object as every operation's `default` response.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Rigmarket GPU rental API')
    .setDescription(
      'Search GPU offers, rent them as instances, manage keys, 2FA, templates, volumes, machines and billing. ' +
        'Wire-compatible with the vastai CLI and SDK.',
    )
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>' })
    .addSecurityRequirements('bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: { ...(document.components?.schemas ?? {}), Error: ERROR_SCHEMA as never },
  };
  // Routes anyone may call (sign-up, login, health, log extracts) need no key.
  const open = new Set(
    routesOf(app)
      .filter((r) => !r.guarded)
      .map((r) => `${r.method} ${r.path}`),
  );
  for (const [path, item] of Object.entries(document.paths)) {
    for (const verb of OPERATIONS) {
      const operation = item[verb];
      if (!operation) continue;
      if (open.has(`${verb} ${path.replace(/\{(\w+)\}/g, ':$1')}`)) operation.security = [];
      operation.responses = {
        ...operation.responses,
        default: {
          description: 'The Error object (400 bad input, 401/403 key, 404, 409, 413, 429, 503)',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      };
    }
  }
  return document;
}

/** Serves the document at OPENAPI_PATHS, without a key (before the app's routes are registered). */
export function serveOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  const body = JSON.stringify(document);
  const adapter = app.getHttpAdapter();
  for (const path of OPENAPI_PATHS)
    adapter.get(path, (_req: unknown, res: { type(t: string): { send(b: string): void } }) =>
      res.type('application/json').send(body),
    );
  return document;
}
