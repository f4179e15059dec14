import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';
import { HOST_HARDWARE } from './testing/fixtures';

/**
 * Hostile inputs (docs/api.md, Limits) against the embedded platform (PGlite): each is refused with a 400/413 Error
 * object naming what is wrong, nothing reaches the database engine that could wedge it, and the platform
 * still answers afterwards (docs/api.md "Limits").
 */
const ADMIN_KEY = 'hostile-input-admin-key';

const deep = (depth: number, leaf: unknown = 1): unknown => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe('hostile input (embedded platform)', () => {
  let platform: EmbeddedTestApp | undefined;
  let app: INestApplication;
  const as = { Authorization: `Bearer ${ADMIN_KEY}` };
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    app = platform.app;
  });
  afterAll(async () => {
    await platform?.close();
  });
  afterEach(async () => {
    // Whatever the request was, the platform still serves.
    await http().get('/healthz').expect(200);
    await http().get('/api/v0/users/current/').set(as).expect(200);
  });

  it('refuses extra_filters nested 950 deep on POST template/ (used to wedge PGlite) with 400', async () => {
    const res = await http()
      .post('/api/v0/template/')
      .set(as)
      .send({ name: 't', image: 'busybox', extra_filters: deep(950) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'bad_request',
      msg: 'Request body nests objects or arrays deeper than 32 levels',
    });
  });

  it('refuses permissions nested 900 deep on POST auth/apikeys/ with 400', async () => {
    const res = await http()
      .post('/api/v0/auth/apikeys/')
      .set(as)
      .send({ name: 'k', permissions: deep(900) });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/deeper than 32/);
  });

  it('refuses a body over 1 MiB with 413 and arrays over 1000 elements with 400', async () => {
    const big = await http()
      .post('/api/v0/template/')
      .set(as)
      .send({ name: 't', image: 'busybox', readme: 'r'.repeat(1_900_000) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({
      success: false,
      error: 'payload_too_large',
      msg: 'Request body is larger than 1048576 bytes',
    });
    const long = await http()
      .post('/api/v0/bundles/')
      .set(as)
      .send({ gpu_name: { in: Array(1001).fill('RTX 4090') } });
    expect(long.status).toBe(400);
    expect(long.body.msg).toMatch(/array longer than 1000/);
  });

  it('refuses over-long strings per field, naming the field', async () => {
    const readme = await http()
      .post('/api/v0/template/')
      .set(as)
      .send({ name: 't', image: 'busybox', readme: 'r'.repeat(100_000) });
    expect(readme.status).toBe(400);
    expect(readme.body.msg).toMatch(/readme is longer than 65536 characters/);
    const image = await http()
      .post('/api/v0/template/')
      .set(as)
      .send({ name: 't', image: 'i'.repeat(600) });
    expect(image.status).toBe(400);
    expect(image.body.msg).toMatch(/image is longer than 512/);
    const label = await http()
      .put('/api/v0/instances/1/')
      .set(as)
      .send({ label: 'l'.repeat(2000) });
    expect(label.status).toBe(400);
    expect(label.body.msg).toMatch(/label is longer than 1024/);
  });

  it.each([
    ['POST', '/api/v0/users/', { email: 'a\u0000@example.com', password: 'pw-long-enough-1', username: 'x' }],
    ['POST', '/api/v0/users/', { email: '\ud800', password: 'pw-long-enough-1', username: 'x' }],
    ['POST', '/api/v0/users/login/', { username: 'admin\u0000', password: 'x' }],
    ['POST', '/api/v0/auth/apikeys/', { name: 'k\u0000' }],
    ['POST', '/api/v0/machines/', { ...HOST_HARDWARE, hostname: 'h\udc00' }],
    ['POST', '/api/v0/template/', { name: 't\u0000', image: 'busybox' }],
    ['PUT', '/api/v0/instances/1/', { label: '\ud800x' }],
  ])('refuses NUL and lone surrogates: %s %s', async (method, path, body) => {
    const call = method === 'POST' ? http().post(path) : http().put(path);
    const res = await call.set(as).send(body as object);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.msg).toMatch(/NUL|UTF-16/);
  });

  it('refuses numbers past their column: num_gpus 1e308, 40-digit ids in paths, id eq 1e308', async () => {
    const gpus = await http()
      .post('/api/v0/machines/')
      .set(as)
      .send({ ...HOST_HARDWARE, num_gpus: 1e308 });
    expect(gpus.status).toBe(400);
    expect(gpus.body.msg).toMatch(/num_gpus/);
    for (const path of [
      `/api/v0/machines/${'9'.repeat(40)}/`,
      `/api/v0/instances/${'9'.repeat(40)}/`,
      `/api/v0/auth/apikeys/${'9'.repeat(40)}/`,
    ]) {
      const res = await http().get(path).set(as);
      expect({ path, status: res.status, error: res.body.error }).toEqual({
        path,
        status: 400,
        error: 'bad_request',
      });
    }
    const search = await http()
      .post('/api/v0/bundles/')
      .set(as)
      .send({ id: { eq: 1e308 } });
    expect(search.status).toBeLessThan(500);
    expect([200, 400]).toContain(search.status);
  });
});
