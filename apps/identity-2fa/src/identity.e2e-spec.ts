import {
  BOTH_MODES,
  type HarnessMode,
  type PlatformHarness,
  startPlatform,
  uniqueName,
  ed25519PublicKeyLine,
} from '@rigmarket/testing';
import request from 'supertest';
import { IDENTITY_RUNTIME } from './identity.tokens';
import { IdentityModule } from './identity.module';
import { RecordingMailer } from './mailer';
import type { ContextRuntime } from '@rigmarket/event-sourcing';

const ADMIN_KEY = 'admin-test-key-0123456789';

interface Harness extends PlatformHarness {
  mailer: RecordingMailer;
  runtime: ContextRuntime;
}

async function startHarness(mode: HarnessMode): Promise<Harness> {
  const mailer = new RecordingMailer();
  const platform = await startPlatform(mode, [IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer })]);
  return {
    ...platform,
    mailer,
    runtime: platform.app.get<ContextRuntime>(IDENTITY_RUNTIME, { strict: false }),
  };
}

describe.each(BOTH_MODES)('identity over HTTP, %s', (_label, mode) => {
  let h: Harness;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('current user', () => {
    it('returns the seeded admin, with and without the trailing slash, as exactly application/json', async () => {
      for (const path of ['/api/v0/users/current/', '/api/v0/users/current']) {
        const res = await http().get(path).set(as(ADMIN_KEY)).expect(200);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toMatchObject({
          id: 1,
          email: 'admin@localhost',
          credit: 0,
          tfa_status: 'disabled',
          email_verified: true,
        });
        expect(res.body).toHaveProperty('ssh_key');
        expect(res.body).toHaveProperty('full_name');
        expect(JSON.stringify(res.body)).not.toContain(ADMIN_KEY);
      }
    });

    it('accepts ?api_key= as older clients send it', async () => {
      const res = await http().get(`/api/v0/users/current/?api_key=${ADMIN_KEY}`).expect(200);
      expect(res.body.id).toBe(1);
    });

    it('answers 401 with the Error object for a missing or wrong key', async () => {
      const missing = await http().get('/api/v0/users/current/').expect(401);
      expect(missing.body).toEqual({
        success: false,
        error: 'missing_key',
        msg: expect.stringContaining('Authorization: Bearer'),
      });
      const wrong = await http().get('/api/v0/users/current/').set(as('not-a-key')).expect(401);
      expect(wrong.body).toEqual({ success: false, error: 'invalid_key', msg: 'Invalid user key' });
    });
  });

  describe('API keys', () => {
    it('creates a scoped key shown once, enforces its categories, and lists keys without values', async () => {
      const created = await http()
        .post('/api/v0/auth/apikeys/')
        .set(as(ADMIN_KEY))
        .send({
          name: 'instances only',
          permissions: { api: { instance_read: {}, misc: {} } },
          key_params: 'x',
          client_id: 'me',
        })
        .expect(201);
      expect(created.body).toMatchObject({
        success: true,
        id: expect.any(Number),
        key: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const scoped = created.body.key as string;

      const forbidden = await http().get('/api/v0/users/current/').set(as(scoped)).expect(403);
      expect(forbidden.body).toEqual({
        success: false,
        error: 'forbidden',
        msg: expect.stringContaining('user_read'),
      });

      const listed = await http().get('/api/v0/auth/apikeys/').set(as(ADMIN_KEY)).expect(200);
      const row = listed.body.apikeys.find((k: { id: number }) => k.id === created.body.id);
      expect(row).toMatchObject({
        id: created.body.id,
        user_id: 1,
        name: 'instances only',
        rights: { api: { instance_read: {}, misc: {} } },
      });
      expect(JSON.stringify(listed.body)).not.toContain(scoped);
      expect(row).not.toHaveProperty('key');

      const one = await http().get(`/api/v0/auth/apikeys/${created.body.id}/`).set(as(ADMIN_KEY)).expect(200);
      expect(one.body.apikey.id).toBe(created.body.id);
    });

    it('lets a key with user_read read the current user', async () => {
      const { body } = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { user_read: {} } } })
        .expect(201);
      await http().get('/api/v0/users/current').set(as(body.key)).expect(200);
      // ...but it may not mint keys (user_write) nor grant more than it holds
      await http().post('/api/v0/auth/apikeys').set(as(body.key)).send({}).expect(403);
    });

    it('refuses a scoped key that tries to grant more than it holds', async () => {
      const { body } = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { user_read: {}, user_write: {} } } })
        .expect(201);
      const res = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(body.key))
        .send({ permissions: { api: { billing_write: {} } } })
        .expect(403);
      expect(res.body.msg).toContain('billing_write');
    });

    it('rejects unknown permission categories with 400', async () => {
      const res = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { root: {} } } })
        .expect(400);
      expect(res.body).toEqual({
        success: false,
        error: 'bad_request',
        msg: 'Unknown permission categories: root',
      });
    });

    it('deletes a key: it is refused at once', async () => {
      const { body } = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ name: 'temp' })
        .expect(201);
      await http().get('/api/v0/users/current').set(as(body.key)).expect(200);
      const deleted = await http()
        .delete(`/api/v0/auth/apikeys/${body.id}/`)
        .set(as(ADMIN_KEY))
        .send({})
        .expect(200);
      expect(deleted.body).toEqual({ success: true, msg: 'Successfully Deleted API Key' });
      await http().get('/api/v0/users/current').set(as(body.key)).expect(401);
      await http().get(`/api/v0/auth/apikeys/${body.id}/`).set(as(ADMIN_KEY)).expect(404);
    });

    it('resets the calling key: the old value stops working at once', async () => {
      const { body } = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ name: 'rotating' })
        .expect(201);
      const reset = await http()
        .put('/api/v0/commands/reset_apikey/')
        .set(as(body.key))
        .send({ client_id: 'me' })
        .expect(200);
      expect(reset.body).toEqual({ success: true, new_api_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
      await http().get('/api/v0/users/current').set(as(body.key)).expect(401);
      await http().get('/api/v0/users/current').set(as(reset.body.new_api_key)).expect(200);
    });

    it('answers 400 for a non-numeric key id and 404 for an unknown one', async () => {
      expect((await http().get('/api/v0/auth/apikeys/abc/').set(as(ADMIN_KEY)).expect(400)).body.error).toBe(
        'bad_request',
      );
      expect(
        (await http().delete('/api/v0/auth/apikeys/99999/').set(as(ADMIN_KEY)).expect(404)).body.success,
      ).toBe(false);
    });
  });

  describe('accounts', () => {
    it('registers, verifies the e-mail, logs in, and uses the session key as a bearer', async () => {
      const email = `${uniqueName('renter')}@example.com`;
      const registered = await http()
        .post('/api/v0/users/')
        .send({ email, password: 'correct horse battery', full_name: 'Ren Ter' })
        .expect(201);
      expect(registered.body.user).toMatchObject({ email, email_verified: false, full_name: 'Ren Ter' });
      const mail = h.mailer.sent.find((m) => m.to === email);
      const code = /code is (\w+)/.exec(mail?.text ?? '')?.[1];
      expect(code).toBeDefined();

      await http().post('/api/v0/users/verify_email/').send({ email, code: 'wrong' }).expect(400);
      const verified = await http().post('/api/v0/users/verify_email/').send({ email, code }).expect(200);
      expect(verified.body.user.email_verified).toBe(true);

      await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'wrong password' })
        .expect(401);
      const login = await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'correct horse battery' })
        .expect(200);
      expect(login.body.session_key).toMatch(/^[0-9a-f]{64}$/);
      const me = await http().get('/api/v0/users/current/').set(as(login.body.session_key)).expect(200);
      expect(me.body).toMatchObject({ email, email_verified: true, id: registered.body.user.id });
      // one user never sees another's keys: only this login's session is listed
      const keys = await http().get('/api/v0/auth/apikeys/').set(as(login.body.session_key)).expect(200);
      expect(keys.body.apikeys).toEqual([
        expect.objectContaining({ key_type: 'session', user_id: registered.body.user.id }),
      ]);
      await http().delete('/api/v0/auth/apikeys/1/').set(as(login.body.session_key)).send({}).expect(403);
    });

    it('refuses a second account with the same e-mail, and bad input with 400 naming the field', async () => {
      const email = `${uniqueName('dup')}@example.com`;
      await http().post('/api/v0/users/').send({ email, password: 'long enough pw' }).expect(201);
      const dup = await http()
        .post('/api/v0/users/')
        .send({ email: email.toUpperCase(), password: 'long enough pw' })
        .expect(409);
      expect(dup.body).toMatchObject({ success: false, error: 'email_taken' });
      const bad = await http()
        .post('/api/v0/users/')
        .send({ email: 'not-an-email', password: 'short' })
        .expect(400);
      expect(bad.body.error).toBe('bad_request');
      expect(bad.body.msg).toContain('email');
      expect(bad.body.msg).toContain('password');
    });
  });

  describe('team roles', () => {
    it('reads a built-in role by name and answers 404 with the Error object for an unknown one', async () => {
      const role = await http().get('/api/v0/team/roles/member/').set(as(ADMIN_KEY)).expect(200);
      expect(role.body).toEqual({
        id: 3,
        name: 'member',
        permissions: expect.arrayContaining(['instance_read', 'instance_write']),
      });
      const missing = await http().get('/api/v0/team/roles/nobody/').set(as(ADMIN_KEY)).expect(404);
      expect(missing.body).toEqual({
        success: false,
        error: 'team_role_not_found',
        msg: 'Team role nobody not found',
      });
    });

    it('creates from a permissions file, updates by id, deletes by name', async () => {
      const created = await http()
        .post('/api/v0/team/roles/')
        .set(as(ADMIN_KEY))
        .send({ name: 'ops', permissions: { api: { instance_read: {}, misc: {} } } })
        .expect(201);
      expect(created.body).toMatchObject({
        success: true,
        name: 'ops',
        permissions: ['instance_read', 'misc'],
      });
      await http()
        .post('/api/v0/team/roles/')
        .set(as(ADMIN_KEY))
        .send({ name: 'ops', permissions: ['misc'] })
        .expect(409);
      await http()
        .put(`/api/v0/team/roles/${created.body.id}/`)
        .set(as(ADMIN_KEY))
        .send({ name: 'ops2', permissions: ['misc'] })
        .expect(200);
      const read = await http().get('/api/v0/team/roles/ops2/').set(as(ADMIN_KEY)).expect(200);
      expect(read.body).toEqual({ id: created.body.id, name: 'ops2', permissions: ['misc'] });
      await http().delete('/api/v0/team/roles/ops2/').set(as(ADMIN_KEY)).send({}).expect(200);
      await http().get('/api/v0/team/roles/ops2/').set(as(ADMIN_KEY)).expect(404);
    });

    it('refuses changes to built-in roles and invalid permissions', async () => {
      expect(
        (await http().delete('/api/v0/team/roles/owner/').set(as(ADMIN_KEY)).send({}).expect(403)).body.error,
      ).toBe('built_in_role');
      await http()
        .post('/api/v0/team/roles/')
        .set(as(ADMIN_KEY))
        .send({ name: 'x', permissions: ['launch_rockets'] })
        .expect(400);
      await http().post('/api/v0/team/roles/').set(as(ADMIN_KEY)).send({ name: 'x' }).expect(400);
    });

    it('needs team_read', async () => {
      const { body } = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { misc: {} } } })
        .expect(201);
      await http().get('/api/v0/team/roles/owner/').set(as(body.key)).expect(403);
    });
  });

  describe('SSH keys', () => {
    it("adds, lists, replaces and deletes the account's keys; users/current shows the newest; others see none", async () => {
      const first = ed25519PublicKeyLine('first@laptop');
      const second = ed25519PublicKeyLine('second@laptop');
      const added = await http()
        .post('/api/v0/ssh/')
        .set(as(ADMIN_KEY))
        .send({ ssh_key: `${first}\n` })
        .expect(200);
      expect(added.body).toEqual({
        success: true,
        key: {
          id: expect.any(Number),
          user_id: 1,
          ssh_key: first,
          public_key: first,
          created_at: expect.any(Number),
        },
      });
      const id = added.body.key.id as number;
      expect((await http().get('/api/v0/users/current/').set(as(ADMIN_KEY))).body.ssh_key).toBe(first);

      const other = await http()
        .post('/api/v0/ssh/')
        .set(as(ADMIN_KEY))
        .send({ ssh_key: second })
        .expect(200);
      expect((await http().get('/api/v0/users/current/').set(as(ADMIN_KEY))).body.ssh_key).toBe(second);
      const listed = await http().get('/api/v0/ssh/').set(as(ADMIN_KEY)).expect(200);
      expect(listed.body.ssh_keys.map((k: { id: number }) => k.id)).toEqual(
        expect.arrayContaining([id, other.body.key.id]),
      );

      const replaced = ed25519PublicKeyLine('replaced@laptop');
      const updated = await http()
        .put(`/api/v0/ssh/${id}/`)
        .set(as(ADMIN_KEY))
        .send({ id, ssh_key: replaced })
        .expect(200);
      expect(updated.body.key).toMatchObject({ id, ssh_key: replaced });

      // bad input, another account, read-only keys
      for (const bad of [
        '~/.ssh/id_ed25519.pub',
        '-----BEGIN OPENSSH PRIVATE KEY-----',
        `ssh-rsa ${first.split(' ')[1]}`,
      ]) {
        const refused = await http()
          .post('/api/v0/ssh/')
          .set(as(ADMIN_KEY))
          .send({ ssh_key: bad })
          .expect(400);
        expect(refused.body).toMatchObject({ success: false, error: 'invalid_ssh_key' });
      }
      const scoped = await http()
        .post('/api/v0/auth/apikeys')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { user_read: {} } } })
        .expect(201);
      await http().get('/api/v0/ssh/').set(as(scoped.body.key)).expect(200);
      await http().post('/api/v0/ssh/').set(as(scoped.body.key)).send({ ssh_key: second }).expect(403);
      const email = `${uniqueName('sshkeys')}@example.com`;
      await http().post('/api/v0/users/').send({ email, password: 'correct horse battery' }).expect(201);
      const stranger = await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'correct horse battery' })
        .expect(200);
      const theirs = await http().get('/api/v0/ssh/').set(as(stranger.body.session_key)).expect(200);
      expect(theirs.body.ssh_keys).toEqual([]);
      await http().delete(`/api/v0/ssh/${id}/`).set(as(stranger.body.session_key)).send({}).expect(404);
      expect(
        (await http().get('/api/v0/users/current/').set(as(stranger.body.session_key))).body.ssh_key,
      ).toBeNull();

      await http().delete(`/api/v0/ssh/${other.body.key.id}/`).set(as(ADMIN_KEY)).send({}).expect(200);
      await http().delete(`/api/v0/ssh/${other.body.key.id}/`).set(as(ADMIN_KEY)).send({}).expect(404);
      expect((await http().get('/api/v0/users/current/').set(as(ADMIN_KEY))).body.ssh_key).toBe(replaced);
      await http().delete(`/api/v0/ssh/${id}/`).set(as(ADMIN_KEY)).send({}).expect(200);
      expect((await http().get('/api/v0/ssh/').set(as(ADMIN_KEY))).body.ssh_keys).toEqual([]);
    });
  });

  describe('HTTP conventions', () => {
    it('answers malformed JSON, unknown routes and health checks as documented', async () => {
      const malformed = await http()
        .post('/api/v0/auth/apikeys/')
        .set(as(ADMIN_KEY))
        .set('Content-Type', 'application/json')
        .send('{"name":')
        .expect(400);
      expect(malformed.body).toMatchObject({
        success: false,
        error: 'bad_request',
        msg: expect.stringContaining('Malformed JSON'),
      });
      const unknown = await http().get('/api/v0/no/such/route').expect(404);
      expect(unknown.body).toEqual({
        success: false,
        error: 'not_found',
        msg: 'No route for GET /api/v0/no/such/route',
      });
      await http().get('/healthz').expect(200);
      await http().get('/readyz').expect(200);
      const res = await http().get('/healthz').set('X-Request-Id', 'req-123');
      expect(res.headers['x-request-id']).toBe('req-123');
    });
  });

  describe('read models', () => {
    it('rebuilds every identity projection from the event store to the same rows', async () => {
      // Gives the 2FA projection an event (a challenge) to rebuild from.
      await http().post('/api/v0/tfa/email/').set(as(ADMIN_KEY)).send({}).expect(200);
      // ...and the webhook endpoints projection one (an endpoint registered).
      await http()
        .post('/api/v0/webhooks/')
        .set(as(ADMIN_KEY))
        .send({ url: 'https://hooks.example.com/rigmarket', event_types: ['credit.low'] })
        .expect(200);
      // ...and the teams projection one (a team created).
      await http().post('/api/v0/team/').set(as(ADMIN_KEY)).send({ team_name: 'ops' }).expect(201);
      // identity's own read models; the ledger-fed user_credit is rebuilt in the marketplace suite
      for (const projection of h.runtime.definition.inlineProjections) {
        const tables = projection.tables;
        const before = await Promise.all(tables.map((t) => h.db.query(`SELECT * FROM ${t} ORDER BY 1`)));
        const applied = await h.runtime.rebuild(projection.name);
        expect(applied).toBeGreaterThan(0);
        const after = await Promise.all(tables.map((t) => h.db.query(`SELECT * FROM ${t} ORDER BY 1`)));
        expect(after).toEqual(before);
      }
    });
  });
});
