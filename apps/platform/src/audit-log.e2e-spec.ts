import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import {
  BOTH_MODES,
  type PlatformHarness,
  eventually,
  settledRebuildMismatches,
  startPlatform,
} from '@rigmarket/testing';
import request from 'supertest';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * The audit log as an account holder and an admin read it (`vastai show audit-logs` calls GET
 * /api/v0/audit_logs/): the account's actions in every context, newest first, with key, address, route
 * and correlation id, no secret in any row, pages through the Link header, one account never sees
 * another's, and the read model rebuilt from the events equals the live one.
 */
const ADMIN_KEY = 'admin-audit-key-0123456789';

interface Row {
  id: string;
  user_id: number;
  api_key_id: number | null;
  ip_address: string | null;
  created_at: number;
  api_route: string | null;
  action: string;
  object: string;
  args: Record<string, unknown>;
  correlation_id: string | null;
}

describe.each(BOTH_MODES)('audit log, %s', (_label, mode) => {
  let h: PlatformHarness;
  const mailer = new RecordingMailer();
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let renterKey: string;
  let renterId: number;
  let otherKey: string;
  let apiKey: string;
  let apiKeyId: number;
  let oldSessionKey: string;

  const log = async (key: string, query = '') =>
    (await http().get(`/api/v0/audit_logs/${query}`).set(as(key)).expect(200)).body as Row[];

  beforeAll(async () => {
    h = await startPlatform(mode, [
      IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
      MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
      InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 20, bootMs: 60, stopMs: 30 } }),
    ]);
    renterKey = await verifiedUser(h.app.getHttpServer(), mailer, 'audited', ['/api/v0/template/']);
    otherKey = await verifiedUser(h.app.getHttpServer(), mailer, 'bystander', ['/api/v0/template/']);
    renterId = (await http().get('/api/v0/users/current/').set(as(renterKey)).expect(200)).body.id;
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey, 5);

    const created = await http()
      .post('/api/v0/auth/apikeys/')
      .set(as(renterKey))
      .set('X-Request-Id', 'audit-key-request')
      .send({ name: 'ci-key' })
      .expect(201);
    apiKey = created.body.key;
    apiKeyId = created.body.id;
    await eventually(
      async () => ((await http().get('/api/v0/template/').set(as(apiKey))).status === 200 ? true : undefined),
      60_000,
      'the new key in marketplace',
    );
    await http()
      .post('/api/v0/template/')
      .set(as(apiKey))
      .send({ name: 'audited', image: 'busybox', env: '-e TOKEN=hunter2' })
      .expect(200);
    await http()
      .put('/api/v0/users/password/')
      .set(as(renterKey))
      .send({ old_password: 'correct horse battery', new_password: 'another long passphrase' })
      .expect(200);
    // The change ended every session: log in again with the new password.
    const email = (await http().get('/api/v0/users/current/').set(as(apiKey)).expect(200)).body.email;
    oldSessionKey = renterKey;
    renterKey = (
      await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'another long passphrase' })
        .expect(200)
    ).body.session_key;
  });
  afterAll(() => h?.close());

  it("lists the account's actions across contexts, newest first, with key, address, route and correlation", async () => {
    const rows = await eventually(
      async () => {
        const found = await log(apiKey);
        return found.some((r) => r.action === 'TemplateCreated') ? found : undefined;
      },
      60_000,
      'the template in the audit log',
    );
    const actions = rows.map((r) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'UserRegistered',
        'UserEmailVerified',
        'UserLoggedIn',
        'ApiKeyCreated',
        'TemplateCreated',
        'UserPasswordSet',
      ]),
    );
    expect(rows.every((r) => r.user_id === renterId)).toBe(true);
    const times = rows.map((r) => r.created_at);
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const keyRow = rows.find((r) => r.action === 'ApiKeyCreated');
    expect(keyRow).toMatchObject({
      api_route: 'POST /api/v0/auth/apikeys/',
      correlation_id: 'audit-key-request',
      object: `api_key-${apiKeyId}`,
    });
    expect(keyRow?.ip_address).toMatch(/127\.0\.0\.1|::1/);
    const template = rows.find((r) => r.action === 'TemplateCreated');
    expect(template).toMatchObject({ api_key_id: apiKeyId, api_route: 'POST /api/v0/template/' });
    expect(template?.object).toMatch(/^template-\d+$/);
  });

  it('never shows a secret: no key value, password, hash or template secret in any row', async () => {
    const text = JSON.stringify(await log(renterKey, '?limit=1000'));
    for (const secret of [
      apiKey,
      renterKey,
      oldSessionKey,
      'correct horse battery',
      'another long passphrase',
      'hunter2',
    ])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[hH]ash"\s*:/); // no keyHash, passwordHash... (hashId is a template's public id)
  });

  it('pages newest first through the Link header, without gaps or repeats', async () => {
    const all = await log(renterKey, '?limit=1000');
    expect(all.length).toBeGreaterThanOrEqual(6);
    const seen: Row[] = [];
    let next: string | undefined = '/api/v0/audit_logs/?limit=2';
    while (next) {
      const res: request.Response = await http().get(next).set(as(renterKey)).expect(200);
      expect((res.body as Row[]).length).toBeLessThanOrEqual(2);
      seen.push(...(res.body as Row[]));
      next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    }
    expect(seen.map((r) => r.id)).toEqual(all.map((r) => r.id));
  });

  it("keeps accounts apart: another user sees only their own rows; an admin may read anyone's", async () => {
    const others = await log(otherKey);
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((r) => r.user_id !== renterId)).toBe(true);
    const refused = await http().get(`/api/v0/audit_logs/?user_id=${renterId}`).set(as(otherKey)).expect(403);
    expect(refused.body).toMatchObject({ success: false, error: 'not_authorized' });
    const asAdmin = await log(ADMIN_KEY, `?user_id=${renterId}`);
    expect(asAdmin.map((r) => r.id)).toEqual((await log(renterKey)).map((r) => r.id));
    const credit = asAdmin.find((r) => r.action === 'CreditGranted');
    expect(credit).toBeUndefined(); // the grant is the admin's action, in the admin's log
    expect((await log(ADMIN_KEY, '?limit=1000')).some((r) => r.action === 'CreditGranted')).toBe(true);
  });

  it('answers 400 for a bad limit or cursor and 404 for an unknown account', async () => {
    for (const query of ['?limit=0', '?limit=1001', '?limit=x', '?before=not-a-cursor']) {
      const res = await http().get(`/api/v0/audit_logs/${query}`).set(as(renterKey)).expect(400);
      expect(res.body).toMatchObject({ success: false, error: 'invalid_args' });
    }
    await http().get('/api/v0/audit_logs/?user_id=99999999').set(as(ADMIN_KEY)).expect(404);
    await http().get('/api/v0/audit_logs/').expect(401);
  });

  it('rebuilds from the events to the same rows', async () => {
    const runtime = h.app.get<ContextRuntime>(IDENTITY_RUNTIME);
    expect(await settledRebuildMismatches(runtime)).toEqual([]);
  });
});
