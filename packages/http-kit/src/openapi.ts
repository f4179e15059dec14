import { dirname } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { static as expressStatic } from 'express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { MAX_PATH_ID } from './input-limits';
import { errorResponse, namedSchemas } from './openapi-contract';
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

/** What every route may answer besides its own statuses (the HTTP layer's refusals, http-kit). */
const COMMON_ERRORS = {
  400: errorResponse(
    ['bad_request'],
    'Malformed input: bad JSON, a field of the wrong type, a string or list too long',
  ),
  413: errorResponse(['payload_too_large'], 'The body is larger than the limit'),
  429: errorResponse(['rate_limited'], 'Too many requests from this client; see the RateLimit headers'),
};
/** What a route that needs a key may answer besides. */
const GUARDED_ERRORS = {
  401: errorResponse(['missing_key', 'invalid_key'], 'No key, or a key that is unknown, revoked or expired'),
  403: errorResponse(['forbidden', 'auth_error'], 'The key may not call this route (scope, credential kind)'),
};

type Responses = Record<string, { description?: string; content?: unknown }>;

/** Adds a common refusal to an operation's responses; a status the route declares itself gains its codes. */
function addError(responses: Responses, status: string, common: { description: string; content: unknown }) {
  const own = responses[status];
  if (own === undefined) responses[status] = common;
  else responses[status] = { ...own, description: `${own.description ?? ''}; ${common.description}` };
}

/**
 * The OpenAPI 3.1.0 description of the routes the app serves, generated from its controllers (and the
 * contracts they declare with ApiContract) by @nestjs/swagger: version 1.0.0, the Bearer scheme required
 * everywhere but on public routes, each route's success body, request body and error statuses (the Error
 * object, with the codes it may carry), the common refusals of the HTTP layer added to every route.
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
  // Request classes that declare no ApiProperty appear as empty schemas: ApiContract bodies replace them.
  const schemas = Object.fromEntries(
    Object.entries(document.components?.schemas ?? {}).filter(
      ([, schema]) => !('properties' in schema) || Object.keys(schema.properties ?? {}).length > 0,
    ),
  );
  document.components = {
    ...document.components,
    schemas: { ...schemas, ...(namedSchemas() as typeof schemas), Error: ERROR_SCHEMA as never },
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
      const isOpen = open.has(`${verb} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
      if (isOpen) operation.security = [];
      // Path ids (id, offerId...) are positive integers however the controller types them (input-limits).
      for (const parameter of (operation.parameters ?? []) as {
        in?: string;
        name?: string;
        schema?: unknown;
      }[])
        if (parameter.in === 'path' && /^(id|\w+Id)$/.test(parameter.name ?? ''))
          parameter.schema = { type: 'integer', minimum: 1, maximum: MAX_PATH_ID };
      const responses = operation.responses as Responses;
      for (const [status, answer] of Object.entries({ ...COMMON_ERRORS, ...(isOpen ? {} : GUARDED_ERRORS) }))
        addError(responses, status, answer);
      operation.responses = Object.fromEntries(
        Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
      ) as never;
    }
  }
  return document;
}

/**
 * Serves the document at OPENAPI_PATHS, without a key (mounted before the app's routes are registered). It is
 * built on the first request for it, not at start: building it walks every controller (about a tenth of
 * the embedded platform's start on existing data), which a start need not wait for.
 */
export function serveOpenApiDocument(app: INestApplication): void {
  let body: string | undefined;
  const adapter = app.getHttpAdapter();
  for (const path of OPENAPI_PATHS)
    adapter.get(path, (_req: unknown, res: { type(t: string): { send(b: string): void } }) => {
      body ??= JSON.stringify(buildOpenApiDocument(app));
      res.type('application/json').send(body);
    });
}

/** Where the interactive docs are served (Swagger UI from npm, its files served by the app: no CDN). */
export const DOCS_PATH = '/docs';

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rigmarket API</title>
<link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: '${OPENAPI_PATHS[0]}',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  // Collapsed by tag: over a hundred operations; a tag opens on a click or a link such as /docs#/Offers.
  docExpansion: 'none',
});
`;

/**
 * Interactive docs at DOCS_PATH: Swagger UI reading the app's own OpenAPI document. Its files come from the
 * swagger-ui-dist package on disk, served by the app (no CDN, works offline). No key needed.
 */
export function serveApiDocs(app: INestApplication): void {
  const assets = dirname(require.resolve('swagger-ui-dist/package.json'));
  const adapter = app.getHttpAdapter();
  type Res = { type(t: string): { send(b: string): void } };
  adapter.get(DOCS_PATH, (_req: unknown, res: Res) => res.type('text/html').send(DOCS_PAGE));
  adapter.get(`${DOCS_PATH}/init.js`, (_req: unknown, res: Res) =>
    res.type('application/javascript').send(DOCS_INIT),
  );
  app.use(`${DOCS_PATH}/assets`, expressStatic(assets, { index: false, fallthrough: false, maxAge: '1h' }));
}
