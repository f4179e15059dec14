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
