import type { INestApplication } from '@nestjs/common';
import fc from 'fast-check';
import request from 'supertest';
import { type Route, routesOf } from '@rigmarket/http-kit';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';

/**
 * Property-based fuzzing of every route of the embedded platform (docs/api.md "Limits"): hostile
 * bodies, query strings and path parameters, anonymously and with a renter's key. Asserts that no request
 * answers 5xx, that every request answers within REQUEST_BOUND_MS, and that a route which needs a key answers
 * an anonymous caller 401/403 whatever the body (authentication before validation). The route table comes
 * from the Nest router (every controller's handlers), so a new route is fuzzed without editing this file.
 *
 * Bounded: FUZZ_RUNS requests (default 3,000), stopped after FUZZ_TIME_MS (default 60 s); FUZZ_SEED replays
 * a failure (fast-check prints the seed and the shrunk counterexample).
 */
const ADMIN_KEY = 'fuzz-admin-key';
const SEED = Number(process.env.FUZZ_SEED ?? 18);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? 60_000);
const REQUEST_BOUND_MS = 5_000;
/** Routes whose answer is a stream that stays open (docs/instances.md "Live streams"). */
const LIVE_STREAMS = ['/api/v0/instances/events', '/api/v0/instances/:id/logs/stream'];

const FIELDS = [
  'id',
  'name',
  'label',
  'image',
  'env',
  'onstart',
  'readme',
  'num_gpus',
  'price',
  'disk',
  'email',
  'password',
  'username',
  'secret',
  'tfa_method',
  'tfa_method_id',
  'code',
  'backup_code',
  'permissions',
  'select_filters',
  'extra_filters',
  'tail',
  'filter',
  'machine',
  'machine_id',
  'instance_id',
  'client_id',
  'template_id',
  'hash_id',
  'size',
  'amount',
  'target_id',
  'phone_number',
  'dst',
  'src',
  'order',
  'limit',
  'type',
  'verification',
  'key',
  'user_id',
  'start_date',
  'end_date',
  'gpu_name',
  'runtype',
  'target_state',
];

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udc00x',
    '9'.repeat(40),
    '-1',
    '1e308',
    'NaN',
    "'; DROP TABLE x; --",
    '(a+)+$',
    '../../etc/passwd',
    '%00',
    'x'.repeat(70_000),
  ),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e308, -1e308, 2 ** 31, 2 ** 63, -1, 0, 0.5, Number.MAX_SAFE_INTEGER + 2),
);
const scalar = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
const leaf = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.dictionary(fc.constantFrom('eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'notin'), scalar, {
    maxKeys: 2,
  }),
);
const deep = (depth: number) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};
const body = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), leaf, { maxKeys: 6 }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(deep(40), deep(31), [Array(1001).fill(1)], 'text', 7) },
);
const query = fc.dictionary(
  fc.constantFrom(...FIELDS),
  fc.oneof(
    hostileString,
    hostileNumber.map(String),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  ),
  { maxKeys: 2 },
);
const pathParam = fc.oneof(
  fc.integer({ min: -5, max: 2_000_000_000 }).map(String),
  hostileString.filter((s) => s.length > 0 && s.length < 200),
);

/** Percent-encodes anything, lone surrogates included (as the bytes of their invalid UTF-8 form, %ED%A0%80). */
const encode = (value: string): string =>
  value.replace(/[\s\S]/gu, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return '%ED%A0%80';
    }
  });

describe('fuzzing every route of the embedded platform', () => {
  let app: INestApplication;
  let platform: EmbeddedTestApp | undefined;
  let routes: Route[];
  let renterKey: string;

  beforeAll(async () => {
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    app = platform.app;
    routes = routesOf(app);
    // A self-registered account, as an attacker would have.
    const account = { email: 'fuzz@example.com', password: 'fuzz-password-0123' };
    await request(app.getHttpServer()).post('/api/v0/users/').send(account).expect(201);
    const login = await request(app.getHttpServer())
      .post('/api/v0/users/login/')
      .send({ username: account.email, password: account.password })
      .expect(200);
    renterKey = login.body.session_key as string;
    await request(app.getHttpServer())
      .get('/api/v0/users/current/')
      .set({ Authorization: `Bearer ${renterKey}` })
      .expect(200);
  });
  afterAll(async () => {
    await platform?.close();
  });

  it('derives the route table from the Nest router', () => {
    expect(routes.length).toBeGreaterThan(60);
    expect(routes).toContainEqual({ method: 'post', path: '/api/v0/template', guarded: true });
    expect(routes).toContainEqual({ method: 'post', path: '/api/v0/tfa/confirm-new', guarded: true });
    expect(routes).toContainEqual({ method: 'post', path: '/api/v0/users', guarded: expect.any(Boolean) });
  });

  it('an anonymous request with a garbage body to a route that needs a key never gets 400 (401/403 first)', async () => {
    // Well-formed JSON of the wrong shape (malformed JSON is refused at the edge, before any route).
    const garbage = [
      { tfa_method: 'carrier-pigeon', code: 7, phone_number: 'x', tfa_method_id: 'x' },
      [1, 2],
      { secret: 5, permissions: 'all', name: { a: 1 }, label: 'x\u0000' },
    ];
    const seen: string[] = [];
    for (const route of routes.filter((r) => r.guarded)) {
      const path = route.path.replace(/:(\w+)/g, '1');
      for (const payload of garbage) {
        const http = request(app.getHttpServer());
        const res = await http[route.method](path)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(payload));
        if (res.status !== 401 && res.status !== 403) seen.push(`${route.method} ${path}: ${res.status}`);
      }
    }
    expect(seen).toEqual([]);
  }, 60_000);

  it(
    'no route answers 5xx or hangs, whatever the body, query, path or caller',
    async () => {
      const started = Date.now();
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(
          // Live streams (Server-Sent Events) answer for as long as the client listens: live-streams.e2e-spec.ts.
          fc.constantFrom(...routes.filter((r) => !LIVE_STREAMS.includes(r.path))),
          fc.boolean(),
          body,
          query,
          fc.array(pathParam, { minLength: 4, maxLength: 4 }),
          async (route, anonymous, payload, params, ids) => {
            runs += 1;
            // The renter must not reset its own key: that would leave the rest of the run anonymous.
            if (!anonymous && route.path.endsWith('reset_apikey')) return;
            let i = 0;
            const path = route.path.replace(/:(\w+)/g, () => encode(ids[i++ % ids.length] ?? '1'));
            const t0 = Date.now();
            const search = Object.entries(params)
              .map(([k, v]) => `${k}=${encode(v)}`)
              .join('&');
            const http = request(app.getHttpServer());
            let call = http[route.method](search ? `${path}?${search}` : path).timeout(REQUEST_BOUND_MS);
            if (!anonymous) call = call.set({ Authorization: `Bearer ${renterKey}` });
            const res = await call.set('Content-Type', 'application/json').send(JSON.stringify(payload));
            const where = `${route.method.toUpperCase()} ${path} (${anonymous ? 'anonymous' : 'renter'})`;
            expect({
              where,
              status: res.status < 500 ? 'below 500' : res.status,
              body: res.status < 500 ? null : res.body,
            }).toEqual({ where, status: 'below 500', body: null });
            expect(Date.now() - t0).toBeLessThan(REQUEST_BOUND_MS);
            // Only the edge checks of the raw request (malformed JSON or URL encoding, size, depth) come before the key.
            const edge =
              res.status === 431 ||
              res.status === 414 ||
              /^(Malformed JSON|Request body|Failed to decode)/.test(String(res.body?.msg));
            if (anonymous && route.guarded && !edge)
              expect({ where, refused: [401, 403, 429].includes(res.status) ? true : res.status }).toEqual({
                where,
                refused: true,
              });
          },
        ),
        {
          seed: SEED,
          numRuns: RUNS,
          interruptAfterTimeLimit: TIME_MS,
          markInterruptAsFailure: false,
          endOnFailure: true,
        },
      );
      // Still serving afterwards.
      await request(app.getHttpServer()).get('/healthz').expect(200);
      expect(runs).toBeGreaterThan(100);
      process.stdout.write(
        `fuzz: ${runs} requests over ${routes.length} routes in ${Date.now() - started} ms\n`,
      );
    },
    TIME_MS + 60_000,
  );
});
