import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { InProcessTransport } from '@rigmarket/messaging';
import { settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { verifiedUser } from './testing/users';

const run = promisify(execFile);
const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-storage-admin-key-0123456789';
const SECRET = 'storage-e2e-secret-access-key-7f3a';

/**
 * The real `vastai` CLI's storage commands (issue 14) against the embedded platform: show connections (the
 * account's cloud connections, made over the API since the real service makes them in its web console).
 * The CLI exits 0 on most HTTP errors, so every test reads its output.
 */
describe('the vastai CLI: storage commands', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-storage-home-'));
  let owner: string;
  let other: string;
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  const vastai = async (key: string, ...args: string[]) => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: `http://127.0.0.1:${port}`,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: key,
    };
    const { stdout, stderr } = await run(CLI, args, { env, timeout: 60_000 });
    return { stdout, stderr, out: stdout + stderr };
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    owner = await verifiedUser(app.getHttpServer(), mailer, 'storage-owner');
    other = await verifiedUser(app.getHttpServer(), mailer, 'storage-other');
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('vastai show connections: lists the connections made over the API, credentials masked; another account sees none and cannot delete them', async () => {
    const made = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({
        name: 'backups',
        cloud_type: 's3',
        endpoint: 'http://127.0.0.1:9/',
        access_key_id: 'AKIAEXAMPLEKEY1234',
        secret_access_key: SECRET,
      })
      .expect(200);
    const id = made.body.id as number;
    expect(made.body).toMatchObject({ success: true, id: expect.any(Number) });

    const table = await vastai(owner, 'show', 'connections');
    expect(table.out).toMatch(/ID\s+NAME\s+Cloud Type/);
    expect(table.out).toMatch(new RegExp(`${id}\\s+backups\\s+s3`));
    const raw = JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout) as unknown[];
    expect(raw).toEqual([
      expect.objectContaining({
        id,
        name: 'backups',
        cloud_type: 's3',
        endpoint: 'http://127.0.0.1:9',
        access_key_id: '****1234',
        secret_access_key: '********',
      }),
    ]);

    // The same name twice is refused; a malformed one too.
    const again = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({ name: 'backups', endpoint: 'http://127.0.0.1:9', access_key_id: 'a', secret_access_key: 'b' });
    expect({ status: again.status, error: again.body.error }).toEqual({
      status: 409,
      error: 'cloud_connection_exists',
    });
    const bad = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({ name: 'x', endpoint: 'ftp://host', access_key_id: 'a', secret_access_key: 'b' });
    expect({ status: bad.status, success: bad.body.success }).toEqual({ status: 400, success: false });

    // Another account: sees none, and its delete of this id is 404 as for an id that does not exist.
    expect(JSON.parse((await vastai(other, 'show', 'connections', '--raw')).stdout)).toEqual([]);
    const foreign = await http().delete(`/api/v0/users/cloud_integrations/${id}/`).set(as(other));
    expect({ status: foreign.status, error: foreign.body.error }).toEqual({
      status: 404,
      error: 'no_such_cloud_connection',
    });
    expect(JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout)).toHaveLength(1);

    // The secret is in no event, in the clear.
    const events = await db.query<{ data: unknown }>(`SELECT data FROM instance_lifecycle.events`);
    expect(JSON.stringify(events)).not.toContain(SECRET);

    await http().delete(`/api/v0/users/cloud_integrations/${id}/`).set(as(owner)).expect(200);
    expect(JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout)).toEqual([]);
  });

  it("keeps instance-lifecycle's read models equal to their rebuild", async () => {
    expect(await settledRebuildMismatches(app.get<ContextRuntime>(INSTANCE_RUNTIME))).toEqual([]);
  });
});
