import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { type PlatformHarness, startPlatform, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import { IdentityModule } from '../identity.module';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { RecordingMailer } from '../mailer';

const ADMIN_KEY = 'admin-sessions-key-0123456789';
const PASSWORD = 'correct horse battery';

/** Sessions from password login: listed, expiring, ended by logout and by a password change (docs/api.md). */
describe('login sessions (embedded)', () => {
  let h: PlatformHarness;
  let runtime: ContextRuntime;
  const mailer = new RecordingMailer();
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  async function register(ttlHarness = h): Promise<string> {
    const email = `${uniqueName('session')}@example.com`;
    const server = ttlHarness.app.getHttpServer();
    await request(server).post('/api/v0/users/').send({ email, password: PASSWORD }).expect(201);
    const code = /code is (\w+)/.exec(mailer.sent.find((m) => m.to === email)?.text ?? '')?.[1];
    await request(server).post('/api/v0/users/verify_email/').send({ email, code }).expect(200);
    return email;
  }
  const login = async (email: string, password = PASSWORD, server = h.app.getHttpServer()) =>
    (await request(server).post('/api/v0/users/login/').send({ username: email, password }).expect(200)).body
      .session_key as string;

  beforeAll(async () => {
    h = await startPlatform('embedded', [
      IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer, loginLockout: { maxFailures: 3, lockoutS: 2 } }),
    ]);
    runtime = h.app.get<ContextRuntime>(IDENTITY_RUNTIME, { strict: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('lists sessions as key_type "session" with their expiry, and logout ends only the calling one', async () => {
    const email = await register();
    const before = Date.now() / 1000;
    const first = await login(email);
    const second = await login(email);
    const listed = (await http().get('/api/v0/auth/apikeys/').set(as(first)).expect(200)).body
      .apikeys as Array<Record<string, unknown>>;
    const sessions = listed.filter((k) => k.key_type === 'session');
    expect(sessions).toHaveLength(2);
    for (const s of sessions) {
      // The default lifetime: 7 days.
      expect(s.expires_at as number).toBeGreaterThan(before + 7 * 86400 - 60);
      expect(s.expires_at as number).toBeLessThan(before + 7 * 86400 + 60);
    }

    const out = await http().post('/api/v0/users/logout/').set(as(first)).expect(200);
    expect(out.body).toMatchObject({ success: true });
    expect((await http().get('/api/v0/users/current/').set(as(first)).expect(401)).body.success).toBe(false);
    await http().get('/api/v0/users/current/').set(as(second)).expect(200);
    const after = (await http().get('/api/v0/auth/apikeys/').set(as(second)).expect(200)).body
      .apikeys as Array<Record<string, unknown>>;
    expect(after.filter((k) => k.key_type === 'session')).toHaveLength(1);

    // An API key is not a session: deleted through the key routes, not logged out.
    const refused = await http().post('/api/v0/users/logout/').set(as(ADMIN_KEY)).expect(400);
    expect(refused.body).toMatchObject({ success: false, error: 'not_a_session' });
    await http().get('/api/v0/users/current/').set(as(ADMIN_KEY)).expect(200);
    await http().post('/api/v0/users/logout/').expect(401);
  });

  it('changes the password only with the current one, ending every session of the account', async () => {
    const email = await register();
    const first = await login(email);
    const second = await login(email);
    const wrong = await http()
      .put('/api/v0/users/password/')
      .set(as(first))
      .send({ old_password: 'not it at all', new_password: 'a new long password' })
      .expect(403);
    expect(wrong.body).toMatchObject({ success: false, error: 'wrong_password' });
    await http()
      .put('/api/v0/users/password/')
      .set(as(first))
      .send({ old_password: PASSWORD, new_password: 'short' })
      .expect(400);
    const changed = await http()
      .put('/api/v0/users/password/')
      .set(as(first))
      .send({ old_password: PASSWORD, new_password: 'a new long password' })
      .expect(200);
    expect(changed.body).toMatchObject({ success: true, revoked_sessions: 2 });
    await http().get('/api/v0/users/current/').set(as(first)).expect(401);
    await http().get('/api/v0/users/current/').set(as(second)).expect(401);
    await http().post('/api/v0/users/login/').send({ username: email, password: PASSWORD }).expect(401);
    const fresh = await login(email, 'a new long password');
    await http().get('/api/v0/users/current/').set(as(fresh)).expect(200);
  });

  it('locks password login after repeated failures (429 login_locked with Retry-After), that account only', async () => {
    const email = await register();
    const other = await register();
    for (let i = 0; i < 3; i++)
      await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'wrong password' })
        .expect(401);
    const locked = await http()
      .post('/api/v0/users/login/')
      .send({ username: email.toUpperCase(), password: PASSWORD })
      .expect(429);
    expect(locked.body).toMatchObject({ success: false, error: 'login_locked', retry_after: 2 });
    expect(locked.headers['retry-after']).toBe('2');
    await login(other);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await login(email);
  });

  it('rebuilds the key read models from the events to the same rows', async () => {
    for (const projection of runtime.definition.inlineProjections) {
      if (!['api_keys', 'auth_api_keys'].includes(projection.name)) continue;
      const read = () =>
        Promise.all(projection.tables.map((t) => h.db.query(`SELECT * FROM ${t} ORDER BY 1`)));
      const before = await read();
      expect(await runtime.rebuild(projection.name)).toBeGreaterThan(0);
      expect(await read()).toEqual(before);
    }
  });

  it('expires a session after RIGMARKET_SESSION_TTL_MS (here 1.5 s)', async () => {
    const short = await startPlatform('embedded', [
      IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer, sessionTtlMs: 1_500 }),
    ]);
    try {
      const email = await register(short);
      const key = await login(email, PASSWORD, short.app.getHttpServer());
      await request(short.app.getHttpServer()).get('/api/v0/users/current/').set(as(key)).expect(200);
      await new Promise((resolve) => setTimeout(resolve, 1_700));
      const expired = await request(short.app.getHttpServer())
        .get('/api/v0/users/current/')
        .set(as(key))
        .expect(401);
      expect(expired.body.success).toBe(false);
      // The expired session is no longer listed; a new login's is.
      const again = await login(email, PASSWORD, short.app.getHttpServer());
      const listed = await request(short.app.getHttpServer())
        .get('/api/v0/auth/apikeys/')
        .set(as(again))
        .expect(200);
      expect(listed.body.apikeys.filter((k: { key_type: string }) => k.key_type === 'session')).toHaveLength(
        1,
      );
    } finally {
      await short.close();
    }
  });
});
