import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, ManualClock } from '@rigmarket/event-sourcing';
import { type HarnessMode, startPlatform } from '@rigmarket/testing';
import request from 'supertest';
import { IdentityModule } from '../identity.module';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { FAILING_PHONE, type Mail, startSmtp, startTwilioStandIn } from '../testing/message-stand-ins';
import { totpCode } from './tfa.crypto';
import { TfaMethodsService } from './tfa-methods.service';

const ADMIN_KEY = 'admin-test-key-tfa-0123456789';
const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const MIN = 60_000;

interface Harness {
  app: INestApplication;
  clock: ManualClock;
  runtime: ContextRuntime;
  tfa: TfaMethodsService;
  mails: Mail[];
  sms: { to: string; from: string; body: string; auth: string }[];
  close(): Promise<void>;
}

async function harness(mode: HarnessMode): Promise<Harness> {
  const smtp = await startSmtp();
  const twilio = await startTwilioStandIn();
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const { app, close } = await startPlatform(
    mode,
    [
      IdentityModule.forRoot({
        adminKey: ADMIN_KEY,
        smtpUrl: smtp.url,
        smtpFrom: 'Rigmarket <no-reply@rigmarket.test>',
        twilio: { accountSid: ACCOUNT_SID, authToken: 'token', from: '+15005550006', baseUrl: twilio.url },
        tfaKey: 'ab'.repeat(32),
      }),
    ],
    { clock },
  );
  return {
    app,
    clock,
    runtime: app.get<ContextRuntime>(IDENTITY_RUNTIME, { strict: false }),
    tfa: app.get(TfaMethodsService, { strict: false }),
    mails: smtp.mails,
    sms: twilio.sent,
    close: async () => {
      await close();
      await smtp.close();
      await twilio.close();
    },
  };
}

function codeIn(text: string): string {
  const match = /(\d{6})/.exec(text);
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1]!;
}

function suite(mode: HarnessMode) {
  let h: Harness;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let counter = 0;

  const lastMailCode = (to: string): string => {
    const mail = [...h.mails].reverse().find((m) => m.to.includes(to));
    if (!mail) throw new Error(`no mail to ${to}`);
    return codeIn(mail.text);
  };
  const lastSmsCode = (to: string): string => {
    const sms = [...h.sms].reverse().find((m) => m.to === to);
    if (!sms) throw new Error(`no sms to ${to}`);
    return codeIn(sms.body);
  };
  const totp = (secret: string, steps = 0) =>
    totpCode(secret, new Date(h.clock.now().getTime() + steps * 30_000));

  /** A registered user with a verified e-mail (code read from the SMTP server) and a session key. */
  async function newUser(
    verified = true,
  ): Promise<{ email: string; password: string; key: string; id: number }> {
    counter += 1;
    const email = `user${counter}-${mode}@example.test`;
    const password = 'correct horse battery';
    const registered = await http().post('/api/v0/users/').send({ email, password }).expect(201);
    if (verified) {
      await http()
        .post('/api/v0/users/verify_email/')
        .send({ email, code: codeFromVerification(email) })
        .expect(200);
    }
    const login = await http().post('/api/v0/users/login/').send({ username: email, password }).expect(200);
    return { email, password, key: login.body.session_key, id: registered.body.user.id };
  }
  const codeFromVerification = (email: string): string => {
    const mail = [...h.mails].reverse().find((m) => m.to.includes(email));
    const match = /verification code is (\S+)/.exec(mail?.text ?? '');
    if (!match) throw new Error(`no verification mail for ${email}`);
    return match[1]!;
  };

  /** The operator's import of a legacy 2FA account (admin route). */
  async function importLegacy(userId: number, phone: string): Promise<void> {
    const res = await http()
      .put(`/api/v0/admin/users/${userId}/legacy-2fa/`)
      .set(as(ADMIN_KEY))
      .send({ phone_number: phone })
      .expect(200);
    expect(res.body).toEqual({ success: true, user_id: userId, tfa_status: 'legacy' });
  }

  /** authorize-new-method by e-mail (forced for users without methods). */
  async function authorizeByEmail(key: string, email: string): Promise<void> {
    const start = await http()
      .post('/api/v0/tfa/authorize-new-method/')
      .set(as(key))
      .send({ tfa_method: 'sms' })
      .expect(200);
    expect(start.body).toEqual({ success: true, secret: expect.any(String), msg: expect.any(String) });
    const done = await http()
      .put('/api/v0/tfa/authorize-new-method/')
      .set(as(key))
      .send({ secret: start.body.secret, code: lastMailCode(email) })
      .expect(200);
    expect(done.body).toEqual({ success: true, msg: 'Authorization successful.' });
  }

  async function enrolTotp(
    key: string,
    email: string,
  ): Promise<{ secret: string; backupCodes: string[]; methodId: number }> {
    await authorizeByEmail(key, email);
    const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(key)).send({}).expect(200);
    expect(setup.body.provisioning_uri).toMatch(
      /^otpauth:\/\/totp\/Rigmarket:.+\?secret=[A-Z2-7]+&issuer=Rigmarket$/,
    );
    const before = await http().get('/api/v0/tfa/status/').set(as(key)).expect(200);
    expect(before.body.methods).toHaveLength(0);
    const added = await http()
      .post('/api/v0/tfa/confirm-new/')
      .set(as(key))
      .send({
        tfa_method: 'totp',
        code: totp(setup.body.secret),
        secret: setup.body.secret,
        label: 'Phone app',
      })
      .expect(200);
    return {
      secret: setup.body.secret,
      backupCodes: added.body.backup_codes ?? [],
      methodId: added.body.method_id,
    };
  }

  beforeAll(async () => {
    h = await harness(mode);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    // Keep TOTP steps apart between tests.
    h.clock.advance(MIN);
  });

  it('shows a method without a label as label "", and last_used null until its first use, then its time', async () => {
    const user = await newUser();
    await authorizeByEmail(user.key, user.email);
    const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
    await http()
      .post('/api/v0/tfa/confirm-new/')
      .set(as(user.key))
      .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
      .expect(200);
    const method = async () =>
      (await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200)).body.methods[0];
    expect(await method()).toMatchObject({ label: '', last_used: null });
    h.clock.advance(30_000);
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ username: user.email, password: user.password })
      .expect(200);
    await http()
      .post('/api/v0/tfa/')
      .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: login.body.tfa_secret })
      .expect(200);
    const used = await method();
    expect(used.last_used).toEqual(expect.any(Number));
    expect(used.last_used).toBeGreaterThanOrEqual(used.created_at);
  });

  it('full TOTP flow: enrolment -> login with TOTP -> login with a backup code -> remove the method', async () => {
    const user = await newUser();
    await authorizeByEmail(user.key, user.email);
    const authorized = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
    expect(authorized.body).toEqual({
      success: true,
      tfa_enabled: false,
      methods: [],
      backup_codes_remaining: 0,
      new_method_authorized: true,
    });

    const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
    const added = await http()
      .post('/api/v0/tfa/confirm-new/')
      .set(as(user.key))
      .send({
        tfa_method: 'totp',
        code: totp(setup.body.secret),
        secret: setup.body.secret,
        label: 'Authenticator',
      })
      .expect(200);
    expect(added.body.msg).toBe('TOTP 2FA method added successfully.');
    expect(added.body.backup_codes).toHaveLength(10);
    for (const code of added.body.backup_codes) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);

    const status = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
    expect(status.body.tfa_enabled).toBe(true);
    expect(status.body.backup_codes_remaining).toBe(10);
    const [method] = status.body.methods;
    expect(method).toEqual({
      id: expect.any(Number),
      user_id: user.id,
      method: 'totp',
      label: 'Authenticator',
      phone_number: null,
      is_primary: true,
      fail_count: 0,
      locked_until: null,
      created_at: expect.any(Number),
      last_used: null,
    });
    expect(JSON.stringify(status.body)).not.toContain(setup.body.secret);
    expect((await http().get('/api/v0/users/current/').set(as(user.key)).expect(200)).body.tfa_status).toBe(
      'enabled',
    );

    // The secret is stored encrypted: the stream holds no base32 secret.
    const history = await h.runtime.runner.load(`tfa-${user.id}`, {
      initialState: () => '',
      evolve: (s: string, e: { data: unknown }) => s + JSON.stringify(e.data),
    });
    expect(history.state).not.toContain(setup.body.secret);

    // Password login now answers a challenge instead of a session.
    h.clock.advance(30_000);
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ username: user.email, password: user.password })
      .expect(200);
    expect(login.body).toEqual({
      success: true,
      tfa_required: true,
      tfa_secret: expect.any(String),
      msg: expect.stringContaining('Two Factor Authentication'),
    });

    // Logged-out completion: the session comes as an HttpOnly cookie, not in the body.
    const code = totp(setup.body.secret);
    const done = await http()
      .post('/api/v0/tfa/')
      .send({ tfa_method: 'totp', code, secret: login.body.tfa_secret })
      .expect(200);
    expect(done.body).not.toHaveProperty('session_key');
    expect(done.body).not.toHaveProperty('legacy_tfa_user');
    expect(done.body).toMatchObject({ success: true, id: user.id, email: user.email, tfa_status: 'enabled' });
    const cookie = String(done.headers['set-cookie']);
    expect(cookie).toMatch(/session_key=[0-9a-f]{64}.*HttpOnly/);
    const cookieKey = /session_key=([0-9a-f]{64})/.exec(cookie)![1]!;
    await http().get('/api/v0/users/current/').set(as(cookieKey)).expect(200);
    // The cookie itself authenticates later requests.
    const viaCookie = await http()
      .get('/api/v0/users/current/')
      .set('Cookie', `session_key=${cookieKey}`)
      .expect(200);
    expect(viaCookie.body.id).toBe(user.id);

    // The same code is not accepted again within its step.
    const replay = await http()
      .post('/api/v0/tfa/')
      .set(as(user.key))
      .send({ tfa_method: 'totp', code })
      .expect(400);
    expect(replay.body).toMatchObject({
      success: false,
      error: '2fa_verification_failed',
      fail_count: 1,
      locked_until: null,
    });

    // API-key (bearer) callers get session_key in the body.
    h.clock.advance(30_000);
    const viaKey = await http()
      .post('/api/v0/tfa/')
      .set(as(user.key))
      .send({ tfa_method: 'totp', code: totp(setup.body.secret) })
      .expect(200);
    expect(viaKey.body.session_key).toMatch(/^[0-9a-f]{64}$/);
    expect(viaKey.body).not.toHaveProperty('backup_codes_remaining');
    await http().get('/api/v0/users/current/').set(as(viaKey.body.session_key)).expect(200);

    // Backup code, sent as the vastai CLI does (tfa_method_id as a string).
    const backup = added.body.backup_codes[0];
    const withBackup = await http()
      .post('/api/v0/tfa/')
      .set(as(user.key))
      .send({ tfa_method_id: String(method.id), backup_code: backup })
      .expect(200);
    expect(withBackup.body.backup_codes_remaining).toBe(9);
    expect(withBackup.body.session_key).toMatch(/^[0-9a-f]{64}$/);
    const reused = await http()
      .post('/api/v0/tfa/')
      .set(as(user.key))
      .send({ backup_code: backup })
      .expect(401);
    // A failure counts (backup codes lock like a method after TFA_LIMITS.maxFailures).
    expect(reused.body).toEqual({
      success: false,
      error: 'invalid_backup_code',
      msg: expect.any(String),
      fail_count: 1,
      locked_until: null,
    });

    // Remove the (last) method: 2FA off, backup codes gone.
    h.clock.advance(30_000);
    const removed = await http()
      .delete('/api/v0/tfa/')
      .set(as(user.key))
      .send({ tfa_method: 'totp', code: totp(setup.body.secret), target_id: method.id })
      .expect(200);
    expect(removed.body).toMatchObject({ success: true, msg: '2FA Successfully Disabled' });
    const after = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
    expect(after.body).toMatchObject({ tfa_enabled: false, methods: [], backup_codes_remaining: 0 });
    expect((await http().get('/api/v0/users/current/').set(as(user.key)).expect(200)).body.tfa_status).toBe(
      'disabled',
    );
    const plain = await http()
      .post('/api/v0/users/login/')
      .send({ username: user.email, password: user.password })
      .expect(200);
    expect(plain.body.session_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('SMS enrolment through the Twilio stand-in, SMS login (logged out), resend, masked numbers', async () => {
    const user = await newUser();
    const phone = '+14155550123';
    await authorizeByEmail(user.key, user.email);
    const sent = await http()
      .post('/api/v0/tfa/sms/')
      .set(as(user.key))
      .send({ phone_number: phone })
      .expect(200);
    expect(sent.body).toEqual({ success: true, msg: '2FA Sent', secret: expect.any(String) });
    expect(h.sms.at(-1)).toMatchObject({
      to: phone,
      from: '+15005550006',
      auth: expect.stringMatching(/^Basic /),
    });

    const exists = await http()
      .post('/api/v0/tfa/sms/')
      .set(as(user.key))
      .send({ phone_number: phone })
      .expect(400);
    expect(exists.body.error).toBe('tfa_challenge_exists');

    const resent = await http()
      .post('/api/v0/tfa/sms/resend/')
      .set(as(user.key))
      .send({ secret: sent.body.secret, phone_number: phone })
      .expect(200);
    expect(resent.body).toEqual({
      success: true,
      msg: 'A 6-digit code has been sent to your phone',
      secret: sent.body.secret,
    });

    const added = await http()
      .post('/api/v0/tfa/confirm-new/')
      .set(as(user.key))
      .send({
        tfa_method: 'sms',
        code: lastSmsCode(phone),
        secret: sent.body.secret,
        phone_number: phone,
        label: 'Mobile',
      })
      .expect(200);
    expect(added.body).toMatchObject({ success: true, msg: 'SMS 2FA method added successfully.' });
    expect(added.body.backup_codes).toHaveLength(10);
    const status = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
    expect(status.body.methods[0]).toMatchObject({
      method: 'sms',
      phone_number: '******0123',
      label: 'Mobile',
    });
    expect(JSON.stringify(status.body)).not.toContain(phone);

    // Logged-out SMS login: password -> tfa_secret -> POST sms/ with it -> POST /tfa/ with the code.
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ email: user.email, password: user.password })
      .expect(200);
    const loggedOutSms = await http()
      .post('/api/v0/tfa/sms/')
      .send({ secret: login.body.tfa_secret })
      .expect(200);
    const done = await http()
      .post('/api/v0/tfa/')
      .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: loggedOutSms.body.secret })
      .expect(200);
    expect(done.headers['set-cookie']).toBeDefined();
    expect(done.body).not.toHaveProperty('session_key');
    // The login secrets are spent.
    const again = await http()
      .post('/api/v0/tfa/')
      .send({ tfa_method: 'sms', code: '000000', secret: loggedOutSms.body.secret })
      .expect(403);
    expect(again.body.error).toBe('auth_error');

    // Resend with a bearer and no secret recovers the challenge by phone number and returns a new secret.
    const viaMethod = await http()
      .post('/api/v0/tfa/sms/')
      .set(as(user.key))
      .send({ tfa_method_id: String(status.body.methods[0].id) })
      .expect(200);
    const recovered = await http()
      .post('/api/v0/tfa/sms/resend/')
      .set(as(user.key))
      .send({ phone_number: phone })
      .expect(200);
    expect(recovered.body.secret).not.toBe(viaMethod.body.secret);
    const session = await http()
      .post('/api/v0/tfa/')
      .set(as(user.key))
      .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: recovered.body.secret })
      .expect(200);
    expect(session.body.session_key).toMatch(/^[0-9a-f]{64}$/);

    // Update: label and primary; email is never a stored method.
    const updated = await http()
      .put('/api/v0/tfa/update/')
      .set(as(user.key))
      .send({ tfa_method: 'sms', label: 'Work phone', is_primary: true })
      .expect(200);
    expect(updated.body).toMatchObject({
      success: true,
      msg: '2FA method updated',
      method: { label: 'Work phone', phone_number: '******0123' },
    });
  });

  it('e-mail codes from the real SMTP server complete a logged-out login', async () => {
    const user = await newUser();
    const { secret: totpSecret } = await enrolTotp(user.key, user.email);
    expect(totpSecret).toBeTruthy();
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ username: user.email, password: user.password })
      .expect(200);
    const sent = await http().post('/api/v0/tfa/email/').send({ secret: login.body.tfa_secret }).expect(200);
    expect(sent.body).toEqual({
      success: true,
      msg: '2FA code sent to your email address.',
      secret: expect.any(String),
    });
    const mail = [...h.mails].reverse().find((m) => m.to.includes(user.email))!;
    expect(mail.subject).toBe('Your Rigmarket 2FA code');
    const done = await http()
      .post('/api/v0/tfa/')
      .send({ tfa_method: 'email', code: codeIn(mail.text), secret: sent.body.secret })
      .expect(200);
    expect(done.body.email).toBe(user.email);
    // With a bearer and no secret, every call makes a fresh challenge.
    const a = await http().post('/api/v0/tfa/email/').set(as(user.key)).send({}).expect(200);
    const b = await http().post('/api/v0/tfa/email/').set(as(user.key)).send({}).expect(200);
    expect(a.body.secret).not.toBe(b.body.secret);
  });

  describe('2FA windows and method states (one test per row)', () => {
    it('code challenge: 10 minutes pass -> 2fa_expired', async () => {
      const user = await newUser();
      const start = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({})
        .expect(200);
      h.clock.advance(10 * MIN + 1000);
      const res = await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: start.body.secret, code: lastMailCode(user.email) })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: '2fa_expired', msg: expect.any(String) });
    });

    it('2FA method: too many failures lock that method only, for 15 minutes (tfa_locked)', async () => {
      const user = await newUser();
      const { secret } = await enrolTotp(user.key, user.email);
      for (let i = 1; i <= 4; i += 1) {
        const res = await http()
          .post('/api/v0/tfa/')
          .set(as(user.key))
          .send({ tfa_method: 'totp', code: '000000' })
          .expect(400);
        expect(res.body).toEqual({
          success: false,
          error: '2fa_verification_failed',
          msg: expect.any(String),
          fail_count: i,
          locked_until: null,
        });
      }
      const fifth = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: '000000' })
        .expect(400);
      const lockedUntil = h.tfa.nowEpoch() + 15 * 60;
      expect(fifth.body).toMatchObject({
        error: '2fa_verification_failed',
        fail_count: 5,
        locked_until: lockedUntil,
      });
      const locked = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(secret) })
        .expect(429);
      expect(locked.body).toEqual({
        success: false,
        error: 'tfa_locked',
        msg: expect.any(String),
        fail_count: 5,
        locked_until: lockedUntil,
        retry_after: 15 * 60,
      });
      expect(locked.headers['retry-after']).toBe(String(15 * 60));
      const status = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
      expect(status.body.methods[0]).toMatchObject({ fail_count: 5, locked_until: lockedUntil });
      // Not account-wide: e-mail codes still work (authorize by e-mail).
      const start = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ tfa_method: 'email' })
        .expect(200);
      await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: start.body.secret, code: lastMailCode(user.email) })
        .expect(200);
      h.clock.advance(15 * MIN);
      await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(secret) })
        .expect(200);
    });

    it('add-method authorization: POST then PUT give new_method_authorized for 30 minutes', async () => {
      const user = await newUser();
      await authorizeByEmail(user.key, user.email);
      h.clock.advance(29 * MIN);
      expect(
        (await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200)).body.new_method_authorized,
      ).toBe(true);
    });

    it('add-method authorization: 30 minutes pass -> authorization_required on add', async () => {
      const user = await newUser();
      await authorizeByEmail(user.key, user.email);
      h.clock.advance(30 * MIN + 1000);
      expect(
        (await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200)).body.new_method_authorized,
      ).toBe(false);
      const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
        .expect(403);
      expect(res.body).toEqual({ success: false, error: 'authorization_required', msg: expect.any(String) });
    });

    it('account 2FA: first method confirmed -> tfa_enabled and 10 backup codes once', async () => {
      const user = await newUser();
      const first = await enrolTotp(user.key, user.email);
      expect(first.backupCodes).toHaveLength(10);
      const phone = '+14155550999';
      const sent = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: phone })
        .expect(200);
      const second = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: sent.body.secret, phone_number: phone })
        .expect(200);
      expect(second.body).not.toHaveProperty('backup_codes');
      expect((await http().get('/api/v0/tfa/status/').set(as(user.key))).body).toMatchObject({
        tfa_enabled: true,
        backup_codes_remaining: 10,
      });
      // Removing one of two methods keeps 2FA on.
      h.clock.advance(30_000);
      const removed = await http()
        .delete('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(first.secret) })
        .expect(200);
      expect(removed.body).toEqual({ success: true, msg: '2FA method removed', remaining_methods: 1 });
    });

    it('account 2FA: last method removed -> disabled, backup codes soft-deleted', async () => {
      const user = await newUser();
      const { backupCodes, methodId } = await enrolTotp(user.key, user.email);
      const res = await http()
        .delete('/api/v0/tfa/')
        .set(as(user.key))
        .send({ backup_code: backupCodes[3], target_id: methodId })
        .expect(200);
      expect(res.body.msg).toBe('2FA Successfully Disabled');
      expect((await http().get('/api/v0/tfa/status/').set(as(user.key))).body).toMatchObject({
        tfa_enabled: false,
        backup_codes_remaining: 0,
      });
      await http().post('/api/v0/tfa/').set(as(user.key)).send({ backup_code: backupCodes[4] }).expect(400);
    });

    it('the legacy import is an admin route: others get 403, a bad number 400, an unknown account 404', async () => {
      const user = await newUser();
      const path = `/api/v0/admin/users/${user.id}/legacy-2fa/`;
      const refused = await http()
        .put(path)
        .set(as(user.key))
        .send({ phone_number: '+14155550999' })
        .expect(403);
      expect(refused.body).toMatchObject({ success: false, error: 'forbidden' });
      await http().put(path).set(as(ADMIN_KEY)).send({ phone_number: '555-0199' }).expect(400);
      await http()
        .put('/api/v0/admin/users/99999999/legacy-2fa/')
        .set(as(ADMIN_KEY))
        .send({ phone_number: '+14155550999' })
        .expect(404);
      expect((await http().get('/api/v0/users/current/').set(as(user.key))).body.tfa_status).toBe('disabled');
    });

    it('legacy account: delete on tfa endpoint -> 2FA Successfully Disabled', async () => {
      const user = await newUser();
      await importLegacy(user.id, '+14155550777');
      expect((await http().get('/api/v0/users/current/').set(as(user.key))).body.tfa_status).toBe('legacy');
      const res = await http().delete('/api/v0/tfa/').set(as(user.key)).send({}).expect(200);
      expect(res.body).toEqual({ success: true, msg: '2FA Successfully Disabled' });
      expect((await http().get('/api/v0/users/current/').set(as(user.key))).body.tfa_status).toBe('disabled');
    });

    it('legacy account: regenerate backup codes backfills an SMS method from the number on file', async () => {
      const user = await newUser();
      const phone = '+14155550888';
      await importLegacy(user.id, phone);
      const login = await http()
        .post('/api/v0/users/login/')
        .send({ username: user.email, password: user.password })
        .expect(200);
      expect(login.body.tfa_required).toBe(true);
      // Adding a method first is the deprecated path.
      await authorizeByEmail(user.key, user.email);
      const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
      const untracked = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
        .expect(400);
      expect(untracked.body.error).toBe('untracked_2fa_found');
      // Legacy users completing login are told so.
      const sent = await http().post('/api/v0/tfa/sms/').send({ secret: login.body.tfa_secret }).expect(200);
      expect(h.sms.at(-1)!.to).toBe(phone);
      const done = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: sent.body.secret })
        .expect(200);
      expect(done.body.legacy_tfa_user).toBe(true);
      h.clock.advance(11 * MIN);
      const again = await http().post('/api/v0/tfa/sms/').set(as(user.key)).send({}).expect(200);
      const regen = await http()
        .put('/api/v0/tfa/regen-backup-codes/')
        .set(as(user.key))
        .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: again.body.secret })
        .expect(200);
      expect(regen.body).toEqual({ success: true, msg: 'success', backup_codes: expect.any(Array) });
      expect(regen.body.backup_codes).toHaveLength(10);
      const status = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(200);
      expect(status.body).toMatchObject({
        tfa_enabled: true,
        backup_codes_remaining: 10,
        methods: [{ method: 'sms', phone_number: '******0888' }],
      });
      expect((await http().get('/api/v0/users/current/').set(as(user.key))).body.tfa_status).toBe('enabled');
      // With a method row the account is no longer legacy.
      const code = h.sms.length;
      h.clock.advance(11 * MIN);
      const third = await http().post('/api/v0/tfa/sms/').set(as(user.key)).send({}).expect(200);
      expect(h.sms.length).toBe(code + 1);
      const relogin = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'sms', code: lastSmsCode(phone), secret: third.body.secret })
        .expect(200);
      expect(relogin.body).not.toHaveProperty('legacy_tfa_user');
    });

    it('regen-backup-codes replaces all 10 codes', async () => {
      const user = await newUser();
      const { secret, backupCodes } = await enrolTotp(user.key, user.email);
      h.clock.advance(30_000);
      const regen = await http()
        .put('/api/v0/tfa/regen-backup-codes/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(secret) })
        .expect(200);
      expect(regen.body.backup_codes).toHaveLength(10);
      await http().post('/api/v0/tfa/').set(as(user.key)).send({ backup_code: backupCodes[0] }).expect(401);
      await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ backup_code: regen.body.backup_codes[0] })
        .expect(200);
    });
  });

  describe('2FA error codes (one test each)', () => {
    it('bad_request: tfa_method outside sms, totp, email; malformed JSON', async () => {
      const user = await newUser();
      const res = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'fax', code: '123456' })
        .expect(400);
      expect(res.body).toEqual({
        success: false,
        error: 'bad_request',
        msg: expect.stringContaining('tfa_method'),
      });
      const bad = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .set('Content-Type', 'application/json')
        .send('{"code":')
        .expect(400);
      expect(bad.body.error).toBe('bad_request');
      const phone = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: '4155550123' })
        .expect(400);
      expect(phone.body).toEqual({
        success: false,
        error: 'bad_request',
        msg: expect.stringContaining('E.164'),
      });
      const id = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method_id: 'abc', backup_code: 'AAAA-BBBB-CCCC' })
        .expect(400);
      expect(id.body.error).toBe('bad_request');
    });

    it('auth_error: each route refuses the callers its row of the matrix does not admit', async () => {
      const user = await newUser();
      const routes: [string, string][] = [
        ['post', '/api/v0/tfa/'],
        ['delete', '/api/v0/tfa/'],
        ['post', '/api/v0/tfa/email/'],
        ['post', '/api/v0/tfa/sms/'],
        ['post', '/api/v0/tfa/sms/resend/'],
        ['get', '/api/v0/tfa/status/'],
        ['post', '/api/v0/tfa/authorize-new-method/'],
        ['put', '/api/v0/tfa/authorize-new-method/'],
        ['post', '/api/v0/tfa/totp-setup/'],
        ['post', '/api/v0/tfa/confirm-new/'],
        ['put', '/api/v0/tfa/update/'],
        ['put', '/api/v0/tfa/regen-backup-codes/'],
      ];
      const send = (method: string, path: string) => {
        const agent = http();
        switch (method) {
          case 'get':
            return agent.get(path);
          case 'put':
            return agent.put(path);
          case 'delete':
            return agent.delete(path);
          default:
            return agent.post(path);
        }
      };
      for (const [method, path] of routes) {
        const none = await send(method, path).send({ tfa_method: 'totp' });
        expect([path, none.status, none.body.error]).toEqual([path, 403, 'auth_error']);
        const wrong = await send(method, path).set(as('not-a-key')).send({ tfa_method: 'totp' });
        expect([path, wrong.status, wrong.body.error]).toEqual([path, 403, 'auth_error']);
      }
      // A tfa_secret from a password login admits only the logged-out routes.
      const enrolled = await newUser();
      await enrolTotp(enrolled.key, enrolled.email);
      const login = await http()
        .post('/api/v0/users/login/')
        .send({ username: enrolled.email, password: enrolled.password })
        .expect(200);
      for (const [method, path] of routes.filter(
        ([m, p]) =>
          !(
            ['/api/v0/tfa/', '/api/v0/tfa/email/', '/api/v0/tfa/sms/', '/api/v0/tfa/sms/resend/'].includes(
              p,
            ) && m === 'post'
          ),
      )) {
        const res = await send(method, path).send({ secret: login.body.tfa_secret, tfa_method: 'totp' });
        expect([path, res.status, res.body.error]).toEqual([path, 403, 'auth_error']);
      }
      expect(user.key).toBeTruthy();
    });

    it('invalid_tfa_method: e-mail cannot be confirmed or updated as a method', async () => {
      const user = await newUser();
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'email', code: '123456', secret: 'x' })
        .expect(400);
      expect(res.body.error).toBe('invalid_tfa_method');
      const upd = await http()
        .put('/api/v0/tfa/update/')
        .set(as(user.key))
        .send({ tfa_method: 'email', label: 'x' })
        .expect(400);
      expect(upd.body.error).toBe('invalid_tfa_method');
    });

    it('admin: true on login completion is refused for a non-admin account', async () => {
      const user = await newUser();
      const { backupCodes } = await enrolTotp(user.key, user.email);
      const res = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ backup_code: backupCodes[0], admin: true })
        .expect(403);
      expect(res.body.error).toBe('forbidden');
      // Refused before verification: the code is still unused.
      await http().post('/api/v0/tfa/').set(as(user.key)).send({ backup_code: backupCodes[0] }).expect(200);
    });

    it('missing_auth_value: no code nor backup_code', async () => {
      const user = await newUser();
      await enrolTotp(user.key, user.email);
      const res = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'totp' })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: 'missing_auth_value', msg: expect.any(String) });
    });

    it('missing_params: code and secret not provided', async () => {
      const user = await newUser();
      const res = await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({})
        .expect(400);
      expect(res.body.error).toBe('missing_params');
      const confirm = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp' })
        .expect(400);
      expect(confirm.body.error).toBe('missing_params');
    });

    it('email_not_verified: code-sending endpoints need a verified e-mail', async () => {
      const user = await newUser(false);
      for (const [path, body] of [
        ['/api/v0/tfa/email/', {}],
        ['/api/v0/tfa/sms/', { phone_number: '+14155550100' }],
        ['/api/v0/tfa/authorize-new-method/', {}],
      ] as const) {
        const res = await http().post(path).set(as(user.key)).send(body).expect(400);
        expect([path, res.body.error]).toEqual([path, 'email_not_verified']);
      }
      // The seeded admin's e-mail counts as verified.
      await http().post('/api/v0/tfa/email/').set(as(ADMIN_KEY)).send({}).expect(200);
    });

    it('challenge_not_found: no challenge matches the secret', async () => {
      const user = await newUser();
      await enrolTotp(user.key, user.email);
      const res = await http()
        .post('/api/v0/tfa/')
        .set(as(user.key))
        .send({ tfa_method: 'email', code: '123456', secret: 'no-such-secret' })
        .expect(400);
      expect(res.body.error).toBe('challenge_not_found');
    });

    it('no_challenge_found: no active challenge (used or cleared)', async () => {
      const user = await newUser();
      const res = await http()
        .post('/api/v0/tfa/sms/resend/')
        .set(as(user.key))
        .send({ phone_number: '+14155550101' })
        .expect(400);
      expect(res.body.error).toBe('no_challenge_found');
      const start = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({})
        .expect(200);
      const code = lastMailCode(user.email);
      await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: start.body.secret, code })
        .expect(200);
      const used = await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: start.body.secret, code })
        .expect(400);
      expect(used.body.error).toBe('no_challenge_found');
    });

    it('tfa_challenge_exists: a recent SMS code is still valid', async () => {
      const user = await newUser();
      await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: '+14155550102' })
        .expect(200);
      const res = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: '+14155550102' })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: 'tfa_challenge_exists', msg: expect.any(String) });
    });

    it('no_pending_authorization: PUT authorize-new-method without a POST', async () => {
      const user = await newUser();
      const res = await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: 'abc', code: '123456' })
        .expect(400);
      expect(res.body.error).toBe('no_pending_authorization');
    });

    it('invalid_backup_code (401) and the backup-code authorize path answers "Authorization successful."', async () => {
      const user = await newUser();
      const { backupCodes } = await enrolTotp(user.key, user.email);
      const bad = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ backup_code: 'AAAA-BBBB-CCCC' })
        .expect(401);
      expect(bad.body.error).toBe('invalid_backup_code');
      const ok = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ backup_code: backupCodes[1] })
        .expect(200);
      expect(ok.body).toEqual({ success: true, msg: 'Authorization successful.' });
    });

    it('duplicate_tfa_method: a second TOTP method', async () => {
      const user = await newUser();
      await enrolTotp(user.key, user.email);
      const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
        .expect(400);
      expect(res.body.error).toBe('duplicate_tfa_method');
    });

    it('label longer than 30 characters is refused (bad_request)', async () => {
      const user = await newUser();
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: '123456', secret: 'S', label: 'x'.repeat(31) })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: 'bad_request', msg: expect.stringContaining('30') });
    });

    it('twilio_error: SMS delivery failed', async () => {
      const user = await newUser();
      const res = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: FAILING_PHONE })
        .expect(400);
      expect(res.body).toEqual({
        success: false,
        error: 'twilio_error',
        msg: expect.stringContaining('not a valid phone number'),
      });
      // The failed challenge does not block a retry with tfa_challenge_exists.
      const retry = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: FAILING_PHONE })
        .expect(400);
      expect(retry.body.error).toBe('twilio_error');
    });

    it('sms_rate_limited: more than 5 SMS codes in an hour', async () => {
      const user = await newUser();
      const phone = '+14155550103';
      const sent = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: phone })
        .expect(200);
      for (let i = 0; i < 4; i += 1) {
        await http()
          .post('/api/v0/tfa/sms/resend/')
          .set(as(user.key))
          .send({ secret: sent.body.secret })
          .expect(200);
      }
      const res = await http()
        .post('/api/v0/tfa/sms/resend/')
        .set(as(user.key))
        .send({ secret: sent.body.secret })
        .expect(429);
      expect(res.body).toEqual({ success: false, error: 'sms_rate_limited', msg: expect.any(String) });
      h.clock.advance(61 * MIN);
      await http()
        .post('/api/v0/tfa/sms/resend/')
        .set(as(user.key))
        .send({ secret: sent.body.secret })
        .expect(200);
    });

    it('preauth_phone_cap: one new phone number in more than 3 set-up attempts a day', async () => {
      const user = await newUser();
      const phone = '+14155550104';
      for (let i = 0; i < 3; i += 1) {
        await http().post('/api/v0/tfa/sms/').set(as(user.key)).send({ phone_number: phone }).expect(200);
        h.clock.advance(11 * MIN);
      }
      const res = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(user.key))
        .send({ phone_number: phone })
        .expect(429);
      expect(res.body).toEqual({ success: false, error: 'preauth_phone_cap', msg: expect.any(String) });
    });

    it('scoped keys: a read-only key may read status but not change 2FA; a 2FA session inherits the key scope', async () => {
      const user = await newUser();
      const { secret } = await enrolTotp(user.key, user.email);
      const mint = (permissions: object) =>
        http().post('/api/v0/auth/apikeys/').set(as(user.key)).send({ permissions }).expect(201);
      const reader = (await mint({ api: { user_read: {} } })).body.key as string;
      await http().get('/api/v0/tfa/status/').set(as(reader)).expect(200);
      const refused = await http()
        .post('/api/v0/tfa/')
        .set(as(reader))
        .send({ tfa_method: 'totp', code: totp(secret, 1) })
        .expect(403);
      expect(refused.body.error).toBe('forbidden');
      const userKey = (await mint({ api: { user_read: {}, user_write: {} } })).body.key as string;
      h.clock.advance(30_000);
      const session = await http()
        .post('/api/v0/tfa/')
        .set(as(userKey))
        .send({ tfa_method: 'totp', code: totp(secret) })
        .expect(200);
      await http().get('/api/v0/users/current/').set(as(session.body.session_key)).expect(200);
      await http().get('/api/v0/team/roles-full/').set(as(session.body.session_key)).expect(403);
    });

    it('preauth_phone_cap counts set-up attempts to one number across accounts', async () => {
      const phone = '+14155550105';
      const a = await newUser();
      const b = await newUser();
      await http().post('/api/v0/tfa/sms/').set(as(a.key)).send({ phone_number: phone }).expect(200);
      await http().post('/api/v0/tfa/sms/').set(as(b.key)).send({ phone_number: phone }).expect(200);
      h.clock.advance(11 * MIN);
      await http().post('/api/v0/tfa/sms/').set(as(a.key)).send({ phone_number: phone }).expect(200);
      h.clock.advance(11 * MIN);
      const res = await http()
        .post('/api/v0/tfa/sms/')
        .set(as(b.key))
        .send({ phone_number: phone })
        .expect(429);
      expect(res.body.error).toBe('preauth_phone_cap');
      h.clock.advance(24 * 60 * MIN);
      await http().post('/api/v0/tfa/sms/').set(as(b.key)).send({ phone_number: phone }).expect(200);
    });

    it('2fa_expired: a password-login tfa_secret older than 10 minutes', async () => {
      const user = await newUser();
      const { secret } = await enrolTotp(user.key, user.email);
      const login = await http()
        .post('/api/v0/users/login/')
        .send({ username: user.email, password: user.password })
        .expect(200);
      h.clock.advance(10 * MIN + 1000);
      const res = await http()
        .post('/api/v0/tfa/')
        .send({ tfa_method: 'totp', code: totp(secret), secret: login.body.tfa_secret })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: '2fa_expired', msg: expect.any(String) });
    });

    it('authorization_required: confirm-new without any authorization', async () => {
      const user = await newUser();
      const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
        .expect(403);
      expect(res.body.error).toBe('authorization_required');
    });

    it('untracked_2fa_found: adding a method to a legacy account before regenerating codes', async () => {
      const user = await newUser();
      await importLegacy(user.id, '+14155550106');
      const setup = await http().post('/api/v0/tfa/totp-setup/').set(as(user.key)).send({}).expect(200);
      const res = await http()
        .post('/api/v0/tfa/confirm-new/')
        .set(as(user.key))
        .send({ tfa_method: 'totp', code: totp(setup.body.secret), secret: setup.body.secret })
        .expect(400);
      expect(res.body).toEqual({ success: false, error: 'untracked_2fa_found', msg: expect.any(String) });
    });

    it('tfa_locked: wrong e-mail codes lock e-mail codes for 15 minutes', async () => {
      const user = await newUser();
      const start = await http()
        .post('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({})
        .expect(200);
      for (let i = 1; i <= 5; i += 1) {
        await http()
          .put('/api/v0/tfa/authorize-new-method/')
          .set(as(user.key))
          .send({ secret: start.body.secret, code: 'x' + i })
          .expect(400);
      }
      const res = await http()
        .put('/api/v0/tfa/authorize-new-method/')
        .set(as(user.key))
        .send({ secret: start.body.secret, code: lastMailCode(user.email) })
        .expect(429);
      expect(res.body).toEqual({
        success: false,
        error: 'tfa_locked',
        msg: expect.any(String),
        retry_after: 15 * 60,
        fail_count: 5,
        locked_until: h.tfa.nowEpoch() + 15 * 60 - 0,
      });
      expect(res.headers['retry-after']).toBe(String(15 * 60));
    });

    it('service_unavailable: the store fails during the authorization check', async () => {
      const user = await newUser();
      // Every query fails while the request runs: with a single failing call, a background relay or
      // reactor poll could take the failure instead of the authorization check.
      const spy = jest.spyOn(h.runtime.db, 'query').mockRejectedValue(new Error('connection refused'));
      try {
        const res = await http().get('/api/v0/tfa/status/').set(as(user.key)).expect(503);
        expect(res.body).toEqual({ success: false, error: 'service_unavailable', msg: expect.any(String) });
      } finally {
        spy.mockRestore();
      }
    });
  });
}

describe('2FA over HTTP, embedded (PGlite, in-process transport)', () => suite('embedded'));
describe('2FA over HTTP, distributed (PostgreSQL, Kafka)', () => suite('distributed'));
