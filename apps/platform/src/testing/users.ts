import type { RecordingMailer } from '@rigmarket/identity-2fa';
import { eventually, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import type { App } from 'supertest/types';

/**
 * A renter as a person makes one: sign up, verify the e-mail with the mailed code, log in; the session
 * key is returned once the apps serving `readyAt` know it (instance-lifecycle by default).
 */
export async function verifiedUser(
  server: App,
  mailer: RecordingMailer,
  prefix = 'renter',
  readyAt: string[] = ['/api/v0/instances/'],
): Promise<string> {
  const http = () => request(server);
  const email = `${uniqueName(prefix)}@example.com`;
  await http().post('/api/v0/users/').send({ email, password: 'correct horse battery' }).expect(201);
  const code = /code is (\w+)/.exec(mailer.sent.find((m) => m.to === email)?.text ?? '')?.[1];
  await http().post('/api/v0/users/verify_email/').send({ email, code }).expect(200);
  const login = await http()
    .post('/api/v0/users/login/')
    .send({ username: email, password: 'correct horse battery' })
    .expect(200);
  const key = login.body.session_key as string;
  const auth = { Authorization: `Bearer ${key}` };
  for (const path of readyAt) {
    await eventually(
      async () => ((await http().get(path).set(auth)).status === 200 ? true : undefined),
      60_000,
      `the key at ${path}`,
    );
  }
  return key;
}

/**
 * Renting needs credit (docs/instances.md, Credit): the admin grants the account of `userKey` $`amount`,
 * then this waits until instance-lifecycle knows it (a rent of an offer that does not exist answers
 * 404 instead of 402 insufficient_credit). `server` is the app's HTTP server or a base URL.
 */
export async function grantCredit(
  server: App | string,
  adminKey: string,
  userKey: string,
  amount = 100,
): Promise<void> {
  const http = () => request(server);
  const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
  const userId = (await http().get('/api/v0/users/current/').set(auth(userKey)).expect(200)).body
    .id as number;
  await eventually(
    async () =>
      (
        await http()
          .post('/api/v0/credit/')
          .set(auth(adminKey))
          .send({ user_id: userId, amount, note: 'test credit' })
      ).status === 200
        ? true
        : undefined,
    60_000,
    `$${amount} of credit granted to user ${userId}`,
  );
  await eventually(
    async () => {
      const res = await http().put('/api/v0/asks/1/').set(auth(userKey)).send({ image: 'busybox' });
      return res.body.error === 'insufficient_credit' ? undefined : true;
    },
    60_000,
    `user ${userId}'s credit in instance-lifecycle`,
  );
}

/**
 * Waits until the admin account of `adminKey` has reached the marketplace (an admin-only route on a machine that
 * does not exist answers 404 instead of 401/403).
 */
export async function adminInMarketplace(server: App | string, adminKey: string): Promise<void> {
  await eventually(
    async () =>
      (
        await request(server)
          .put('/api/v0/machines/999999/verification/')
          .set({ Authorization: `Bearer ${adminKey}` })
          .send({ verification: 'verified' })
      ).status === 404
        ? true
        : undefined,
    60_000,
    'the admin user in marketplace',
  );
}
