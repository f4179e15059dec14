import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { createEmbeddedApp } from './platform';

const run = promisify(execFile);
const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-admin-key';

/**
 * The real `vastai` CLI (PyPI, installed by scripts/vastai-cli.sh) against the embedded platform:
 * existing clients must work unchanged. Note the CLI exits 0 on HTTP errors, so output is asserted.
 */
describe('the vastai CLI against the embedded platform', () => {
  let app: INestApplication;
  let db: Database;
  let env: NodeJS.ProcessEnv;
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));

  const vastai = async (...args: string[]) => {
    const { stdout, stderr } = await run(CLI, args, { env, timeout: 60_000 });
    return { stdout, stderr, out: stdout + stderr };
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({ db, transport: new InProcessTransport(), identity: { adminKey: ADMIN_KEY } });
    await app.listen(0, '127.0.0.1');
    const port = (app.getHttpServer().address() as { port: number }).port;
    env = { PATH: process.env.PATH, HOME: home, VAST_URL: `http://127.0.0.1:${port}`, VASTAI_NO_UPDATE_CHECK: '1', VAST_API_KEY: ADMIN_KEY };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('shows the current user', async () => {
    const { stdout } = await vastai('show', 'user', '--raw');
    expect(JSON.parse(stdout)).toMatchObject({ id: 1, email: 'admin@localhost', credit: 0 });
  });

  it('reports a wrong key', async () => {
    const { out } = await vastai('show', 'user', '--raw', '--api-key', 'wrong-key');
    expect(out).toContain('Invalid user key');
  });

  it('creates, shows, lists and deletes a scoped API key; the deleted key is refused', async () => {
    const permissions = join(home, 'perm.json');
    writeFileSync(permissions, JSON.stringify({ api: { user_read: {}, misc: {} } }));
    const created = await vastai('create', 'api-key', '--name', 'cli', '--permission_file', permissions);
    const id = Number(/'id': (\d+)/.exec(created.out)?.[1]);
    const key = /'key': '([0-9a-f]{64})'/.exec(created.out)?.[1];
    expect(id).toBeGreaterThan(1);
    expect(key).toBeDefined();

    const listed = JSON.parse((await vastai('show', 'api-keys', '--raw')).stdout);
    expect(listed.apikeys.map((k: { id: number }) => k.id)).toContain(id);
    expect((await vastai('show', 'api-key', String(id))).out).toContain("'name': 'cli'");
    expect(JSON.parse((await vastai('show', 'user', '--raw', '--api-key', key!)).stdout).id).toBe(1);

    expect((await vastai('delete', 'api-key', String(id))).out).toContain('Successfully Deleted API Key');
    expect((await vastai('show', 'user', '--raw', '--api-key', key!)).out).toContain('"status_code": 401');
  });

  it('resets a key: the CLI prints the new one, which works, and the old one is refused', async () => {
    const created = await vastai('create', 'api-key', '--name', 'rot', '--permission_file', join(home, 'perm.json'));
    const key = /'key': '([0-9a-f]{64})'/.exec(created.out)![1]!;
    // reset needs user_write: a user_read key is refused with 403
    expect((await vastai('reset', 'api-key', '--api-key', key)).out).toMatch(/403|lacks the user_write/);
    const full = /'key': '([0-9a-f]{64})'/.exec((await vastai('create', 'api-key', '--name', 'full', '--permission_file', writePerm({ api: { user_read: {}, user_write: {} } }))).out)![1]!;
    const reset = await vastai('reset', 'api-key', '--api-key', full);
    const fresh = /([0-9a-f]{64})/.exec(reset.out)?.[1];
    expect(fresh).toBeDefined();
    expect((await vastai('show', 'user', '--raw', '--api-key', full)).out).toContain('"status_code": 401');
    expect(JSON.parse((await vastai('show', 'user', '--raw', '--api-key', fresh!)).stdout).id).toBe(1);
  });

  it('shows, creates and removes team roles', async () => {
    expect(JSON.parse((await vastai('show', 'team-role', 'member', '--raw')).stdout)).toMatchObject({ id: 3, name: 'member' });
    expect((await vastai('show', 'team-role', 'nobody')).out).toContain('Failed with error 404: Team role nobody not found');
    expect((await vastai('create', 'team-role', '--name', 'ops', '--permissions', writePerm({ api: { misc: {} } }))).out).toContain("'name': 'ops'");
    expect((await vastai('remove', 'team-role', 'ops')).out).toContain("'success': True");
    expect((await vastai('show', 'team-role', 'ops')).out).toContain('404');
  });

  function writePerm(value: object): string {
    const file = join(home, `perm-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  }
});
