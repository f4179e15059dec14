import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import type { Database } from '@rigmarket/event-sourcing';
import { SimulatedHostDriver } from '@rigmarket/instance-lifecycle';
import request from 'supertest';
import { DEMO_CREDIT, DEMO_HOSTS, seedDemoHosts } from './demo-hosts';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';

const execFileAsync = promisify(execFile);
const CLI = join(__dirname, '..', 'dist', 'cli.js');

// Renters here have no credit: the billing meter (billing.e2e-spec.ts) would stop their instances mid-test.
const NO_BILLING_TIMER = { billingIntervalMs: 0 };

const ADMIN_KEY = 'embedded-admin-key';

/** Embedded mode: four contexts, one process; every context sees a key change before the answer is sent. */
describe('the embedded platform', () => {
  let platform: EmbeddedTestApp | undefined;
  let app: INestApplication;
  let db: Database;
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: NO_BILLING_TIMER,
      // Instances stay provisioning until a test moves them: the wait-running test's short wait must time out
      // however long its CLI takes to start on a loaded machine (it once found the instance running already).
      instances: { simulatedHost: { pullMs: 600_000 } },
    });
    ({ app, db } = platform);
  });
  afterAll(async () => {
    await platform?.close();
  });

  it('has every context ready and healthy', async () => {
    await request(app.getHttpServer()).get('/readyz').expect(200);
    for (const schema of ['identity', 'marketplace', 'instance_lifecycle', 'sync_maintenance']) {
      const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${schema}.migrations`);
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    }
  });

  it('lets another context accept a new key, and refuse a deleted one, right after the answer', async () => {
    const server = app.getHttpServer();
    const { body } = await request(server)
      .post('/api/v0/auth/apikeys/')
      .set(as(ADMIN_KEY))
      .send({ name: 'now' })
      .expect(201);
    // marketplace-api authenticates from its own projection: no waiting in embedded mode
    await request(server)
      .get('/api/v0/machines')
      .set(as(body.key))
      .expect(200, { success: true, machines: [] });
    await request(server).delete(`/api/v0/auth/apikeys/${body.id}/`).set(as(ADMIN_KEY)).send({}).expect(200);
    const refused = await request(server).get('/api/v0/machines').set(as(body.key)).expect(401);
    expect(refused.body).toEqual({ success: false, error: 'invalid_key', msg: 'Invalid user key' });
  });

  it('serves the public GPU name list without a key', async () => {
    await request(app.getHttpServer())
      .get('/api/v0/gpu_names/unique/')
      .expect(200, { success: true, gpu_names: [] });
  });

  it('lists the demo hosts of `npm start` so a newcomer can rent at once', async () => {
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    const machines = await seedDemoHosts(`http://127.0.0.1:${address.port}`, ADMIN_KEY);
    expect(machines).toHaveLength(DEMO_HOSTS.length);
    const server = app.getHttpServer();
    const { body } = await request(server)
      .post('/api/v0/bundles/')
      .set(as(ADMIN_KEY))
      .send({ verified: { eq: true }, rentable: { eq: true } })
      .expect(200);
    const offered = new Set(
      (body.offers as Array<{ machine_id: number; gpu_name: string }>).map((o) => o.machine_id),
    );
    expect([...offered].sort()).toEqual([...machines].sort());
    expect(
      (await request(server).get('/api/v0/users/me/credit').set(as(ADMIN_KEY)).expect(200)).body.credit,
    ).toBe(DEMO_CREDIT);
    const rented = await request(server)
      .put(`/api/v0/asks/${machines[0]! * 1000 + 1}/`)
      .set(as(ADMIN_KEY))
      .send({ image: 'busybox', disk: 10 })
      .expect(200);
    expect(rented.body).toMatchObject({ success: true, new_contract: expect.any(Number) });
  });

  it('lets `rigmarket wait-running` report a crashed instance at once instead of waiting for its timeout', async () => {
    const address = app.getHttpServer().address() as { port: number };
    const server = app.getHttpServer();
    // machine 2 is one of the demo hosts listed by the test above
    const created = await request(server)
      .put(`/api/v0/asks/${2 * 1000 + 1}/`)
      .set(as(ADMIN_KEY))
      .send({ image: 'busybox', disk: 10 })
      .expect(200);
    const id = created.body.new_contract as number;
    const cli = (timeout: string) =>
      execFileAsync(
        process.execPath,
        [CLI, 'wait-running', String(id), '--timeout-s', timeout, '--interval-s', '0.2'],
        {
          env: {
            ...process.env,
            RIGMARKET_URL: `http://127.0.0.1:${address.port}`,
            RIGMARKET_API_KEY: ADMIN_KEY,
          },
        },
      ).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          stdout: e.stdout,
          stderr: e.stderr,
        }),
      );
    // Still provisioning (this suite's simulated host pulls for minutes): a short wait times out.
    const early = await cli('0.5');
    expect(early.code).toBe(4);
    expect(early.stderr).toMatch(/is still (provisioning|loading) after \d+ s; gave up/);
    app.get(SimulatedHostDriver, { strict: false }).fail(id, 'exited');
    const started = Date.now();
    const dead = await cli('120');
    expect(dead.code).toBe(3);
    expect(dead.stderr).toContain('is exited and will never reach running');
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
