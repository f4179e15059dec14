import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { routesOf } from '@rigmarket/http-kit';

/**
 * The OpenAPI document (docs/api.md): OpenAPI 3.1.0, version 1.0.0, served without a key at
 * /api/v0/openapi.json and /openapi.json, listing every route the platform serves (the route table comes
 * from the Nest router), each with its success body schema, its error statuses (the Error object and the codes
 * it may carry), the Bearer scheme; the committed docs/openapi.json is what the code generates.
 */
describe('the OpenAPI document of the embedded platform', () => {
  let db: Database;
  let app: INestApplication;

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({ db, transport: new InProcessTransport(), identity: { adminKey: 'oa' } });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('is served without a key at both paths, as OpenAPI 3.1.0 version 1.0.0 with the Bearer scheme', async () => {
    for (const path of ['/api/v0/openapi.json', '/openapi.json']) {
      const res = await request(app.getHttpServer()).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toMatchObject({
        openapi: '3.1.0',
        info: { version: '1.0.0' },
        security: [{ bearer: [] }],
        components: {
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
          schemas: { Error: { required: ['success', 'error', 'msg'] } },
        },
      });
    }
  });

  it('describes every route the platform serves, each with its success body schema and its error statuses', async () => {
    type Answer = { description?: string; content?: Record<string, { schema?: Record<string, unknown> }> };
    const document = (await request(app.getHttpServer()).get('/api/v0/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, Answer>; security?: unknown[] }>>;
    };
    const described = new Set(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item).map((verb) => `${verb} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
      ),
    );
    const routes = routesOf(app);
    const served = routes.map((r) => `${r.method} ${r.path}`);
    // A route open to anyone says so (no key); the others inherit the Bearer requirement.
    const openOnes = routes.filter((r) => !r.guarded);
    expect(openOnes.length).toBeGreaterThan(2);
    for (const r of openOnes)
      expect(document.paths[r.path.replace(/:(\w+)/g, '{$1}')]?.[r.method]).toMatchObject({ security: [] });
    expect(served.length).toBeGreaterThan(60);
    expect(served.filter((route) => !described.has(route))).toEqual([]);
    const withoutSchema: string[] = [];
    for (const [path, item] of Object.entries(document.paths))
      for (const [verb, operation] of Object.entries(item)) {
        // One success status, with a body schema that says something (ApiContract on the route).
        const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
        const schemas = successes.flatMap(([, answer]) =>
          Object.values(answer.content ?? {}).map((media) => media.schema ?? {}),
        );
        if (successes.length !== 1 || schemas.length !== 1 || Object.keys(schemas[0]!).length === 0)
          withoutSchema.push(`${verb} ${path}`);
        // No catch-all: every error status is listed, as the Error object with the codes it may carry.
        expect(operation.responses.default).toBeUndefined();
        for (const [status, answer] of Object.entries(operation.responses).filter(([s]) => /^[45]/.test(s))) {
          expect(answer.content?.['application/json']?.schema).toEqual({
            $ref: '#/components/schemas/Error',
          });
          expect(answer.description).toMatch(/error: [a-z0-9_]+/);
          expect(status).toMatch(/^(400|401|403|404|409|413|422|429|503)$/);
        }
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '413', '429']));
        if (operation.security === undefined)
          expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
      }
    expect(withoutSchema).toEqual([]);
  });

  it('equals the committed docs/openapi.json, which the distributed edge serves (else: npm run openapi)', async () => {
    const served = (await request(app.getHttpServer()).get('/api/v0/openapi.json').expect(200))
      .body as unknown;
    const committed = JSON.parse(
      readFileSync(join(__dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8'),
    ) as unknown;
    expect(served).toEqual(committed);
  });
});
