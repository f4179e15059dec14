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
 * from the Nest router), with the Bearer scheme and the Error object.
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

  it('describes every route the platform serves, each with the Error object as its default response', async () => {
    const document = (await request(app.getHttpServer()).get('/api/v0/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
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
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item))
        expect(operation.responses.default).toMatchObject({
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        });
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
