import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { routesOf } from '@rigmarket/http-kit';
import { apiClient } from '@rigmarket/testing';
import { seedDemoHosts } from './demo-hosts';

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
          expect(status).toMatch(/^(400|401|402|403|404|409|413|422|429|503)$/);
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
  it('is what the generated TypeScript client drives the platform with: key check, search, rent, poll, stop, destroy', async () => {
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    await seedDemoHosts(base, 'oa');
    const api = apiClient(base, 'oa');

    const me = await api.GET('/api/v0/users/current');
    expect(me.response.status).toBe(200);
    expect(me.data).toMatchObject({ id: expect.any(Number), is_admin: true, tfa_status: 'disabled' });
    const refused = await apiClient(base, 'not-a-key').GET('/api/v0/users/current');
    expect(refused.response.status).toBe(401);
    expect(refused.error).toEqual({ success: false, error: 'invalid_key', msg: 'Invalid user key' });

    const search = await api.POST('/api/v0/bundles', {
      body: { num_gpus: { eq: 1 }, order: [['dph_total', 'asc']], limit: 3 },
    });
    const offer = search.data?.offers[0];
    expect(offer).toMatchObject({ num_gpus: 1, gpu_name: expect.any(String), dph_total: expect.any(Number) });

    const rent = await api.PUT('/api/v0/asks/{offerId}', {
      params: { path: { offerId: offer!.id } },
      body: {
        image: 'ubuntu:22.04',
        disk: 8,
        runtype: 'ssh_direct',
        env: { '-p 8080:8080': '1' },
        label: 'typed',
      },
    });
    expect(rent.data).toMatchObject({
      success: true,
      new_contract: expect.any(Number),
      instance_api_key: expect.any(String),
    });
    const id = rent.data!.new_contract;

    const one = await api.GET('/api/v0/instances/{id}', { params: { path: { id } } });
    // Without as_of the answer is the live instance (the other member of the union is an as-of state).
    expect(one.data && 'instances' in one.data ? one.data.instances : one.data).toMatchObject({
      id,
      label: 'typed',
      num_gpus: 1,
    });
    const listed = await api.GET('/api/v0/instances');
    expect(listed.data?.instances.map((i) => i.id)).toContain(id);

    const stop = await api.PUT('/api/v0/instances/{id}', {
      params: { path: { id } },
      body: { state: 'stopped' },
    });
    expect(stop.data).toMatchObject({ success: true });
    const destroyed = await api.DELETE('/api/v0/instances/{id}', { params: { path: { id } } });
    expect(destroyed.data).toMatchObject({ success: true });
    const unknown = await api.GET('/api/v0/instances/{id}', { params: { path: { id: 999_999 } } });
    // Another account's or an unknown instance: no error, `instances` is null (as the document says).
    expect(unknown.response.status).toBe(200);
    expect(unknown.data).toEqual({ instances: null });
  });
});
