import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';
import { HOST_HARDWARE } from './testing/fixtures';
import { grantCredit } from './testing/users';

/**
 * Per-account quotas (docs/api.md "Quotas"): past the limit a create answers 403 quota_exceeded naming
 * the variable that sets it; deleting one makes room again. Limits are lowered through their variables.
 */
const ADMIN_KEY = 'quota-admin-key';
const LIMITS = {
  RIGMARKET_QUOTA_TEMPLATES: '2',
  RIGMARKET_QUOTA_API_KEYS: '3', // the admin's own key counts: two more fit
  RIGMARKET_QUOTA_MACHINES: '1',
  RIGMARKET_QUOTA_INSTANCES: '0',
};

describe('per-account quotas (embedded platform)', () => {
  let platform: EmbeddedTestApp | undefined;
  let app: INestApplication;
  const as = { Authorization: `Bearer ${ADMIN_KEY}` };
  const http = () => request(app.getHttpServer());
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const [name, value] of Object.entries(LIMITS)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    app = platform.app;
  });
  afterAll(async () => {
    await platform?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const expectQuota = (res: request.Response, variable: string) => {
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, error: 'quota_exceeded', quota: variable });
    expect(res.body.msg).toContain(variable);
  };

  it('templates: the third is refused, and a delete makes room', async () => {
    const ids: string[] = [];
    for (const name of ['a', 'b']) {
      const res = await http().post('/api/v0/template/').set(as).send({ name, image: 'busybox' });
      expect(res.status).toBe(200);
      ids.push(res.body.template.hash_id as string);
    }
    expectQuota(
      await http().post('/api/v0/template/').set(as).send({ name: 'c', image: 'busybox' }),
      'RIGMARKET_QUOTA_TEMPLATES',
    );
    await http().delete('/api/v0/template/').set(as).send({ hash_id: ids[0] }).expect(200);
    await http().post('/api/v0/template/').set(as).send({ name: 'c', image: 'busybox' }).expect(200);
  });

  it('API keys: the third is refused, and a deleted key no longer counts', async () => {
    const created: number[] = [];
    for (const name of ['k1', 'k2']) {
      const res = await http().post('/api/v0/auth/apikeys/').set(as).send({ name });
      expect(res.status).toBe(201);
      created.push(res.body.id as number);
    }
    expectQuota(
      await http().post('/api/v0/auth/apikeys/').set(as).send({ name: 'k3' }),
      'RIGMARKET_QUOTA_API_KEYS',
    );
    await http().delete(`/api/v0/auth/apikeys/${created[0]}/`).set(as).expect(200);
    await http().post('/api/v0/auth/apikeys/').set(as).send({ name: 'k3' }).expect(201);
  });

  it('machines: the second registration is refused', async () => {
    await http().post('/api/v0/machines/').set(as).send(HOST_HARDWARE).expect(201);
    expectQuota(
      await http().post('/api/v0/machines/').set(as).send(HOST_HARDWARE),
      'RIGMARKET_QUOTA_MACHINES',
    );
  });

  it('instances: an account at its quota rents nothing', async () => {
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
    expectQuota(
      await http().put('/api/v0/asks/1001/').set(as).send({ image: 'busybox', disk: 10 }),
      'RIGMARKET_QUOTA_INSTANCES',
    );
  });
});
