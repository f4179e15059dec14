import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { ed25519PublicKeyLine } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { HOST_HARDWARE } from './testing/fixtures';

// Renters here have no credit: the billing meter (billing.e2e-spec.ts) would stop their instances mid-test.
const NO_BILLING_TIMER = { billingIntervalMs: 0 };

const run = promisify(execFile);
const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-admin-key';

/**
 * The real `vastai` CLI (PyPI, installed by scripts/vastai-cli.sh) against the embedded platform:
 * existing clients must work unchanged (issues 2 and 4). The CLI exits 0 on HTTP errors, so output is asserted.
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
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY },
      marketplace: NO_BILLING_TIMER,
    });
    await app.listen(0, '127.0.0.1');
    const port = (app.getHttpServer().address() as { port: number }).port;
    env = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: `http://127.0.0.1:${port}`,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: ADMIN_KEY,
    };
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

  it('shows the audit log: the key created and deleted above, with address and route, newest first', async () => {
    const rows = JSON.parse((await vastai('show', 'audit-logs', '--raw')).stdout) as Array<{
      action: string;
      api_route: string;
      ip_address: string;
      created_at: number;
    }>;
    const created = rows.findIndex(
      (r) => r.action === 'ApiKeyCreated' && r.api_route === 'POST /api/v0/auth/apikeys/',
    );
    const deleted = rows.findIndex(
      (r) => r.action === 'ApiKeyDeleted' && /^DELETE \/api\/v0\/auth\/apikeys\/\d+\/$/.test(r.api_route),
    );
    expect(deleted).toBeGreaterThanOrEqual(0);
    expect(created).toBeGreaterThan(deleted);
    expect(rows[created]?.ip_address).toMatch(/127\.0\.0\.1/);
    const table = (await vastai('show', 'audit-logs')).out;
    expect(table).toMatch(/ip_address\s+api_key_id\s+created_at\s+api_route/);
    // The CLI's table shows spaces inside a cell as underscores.
    expect(table).toMatch(/POST[_ ]\/api\/v0\/auth\/apikeys\/\s/);
  });

  it('creates, shows, updates (from a .pub file) and deletes SSH keys; show user has the newest', async () => {
    const key = ed25519PublicKeyLine('cli@laptop');
    const created = await vastai('create', 'ssh-key', key);
    expect(created.out).toContain('ssh-key created');
    const id = Number(/'id': (\d+)/.exec(created.out)?.[1]);
    expect(id).toBeGreaterThan(0);
    expect(JSON.parse((await vastai('show', 'user', '--raw')).stdout).ssh_key).toBe(key);
    const listed = JSON.parse((await vastai('show', 'ssh-keys', '--raw')).stdout);
    expect(listed.ssh_keys).toEqual(expect.arrayContaining([expect.objectContaining({ id, ssh_key: key })]));

    const replacement = ed25519PublicKeyLine('cli@desktop');
    const pub = join(home, 'id_ed25519.pub');
    writeFileSync(pub, `${replacement}\n`);
    expect((await vastai('update', 'ssh-key', String(id), pub)).out).toContain(replacement);
    expect(JSON.parse((await vastai('show', 'user', '--raw')).stdout).ssh_key).toBe(replacement);

    expect((await vastai('create', 'ssh-key', 'not a key at all')).out).toContain('Failed with error 400');
    expect((await vastai('delete', 'ssh-key', String(id))).out).toContain(`SSH key ${id} deleted`);
    const after = JSON.parse((await vastai('show', 'ssh-keys', '--raw')).stdout);
    expect(after.ssh_keys.map((k: { id: number }) => k.id)).not.toContain(id);
  });

  it('resets a key: the CLI prints the new one, which works, and the old one is refused', async () => {
    const created = await vastai(
      'create',
      'api-key',
      '--name',
      'rot',
      '--permission_file',
      join(home, 'perm.json'),
    );
    const key = /'key': '([0-9a-f]{64})'/.exec(created.out)![1]!;
    // reset needs user_write: a user_read key is refused with 403
    expect((await vastai('reset', 'api-key', '--api-key', key)).out).toMatch(/403|lacks the user_write/);
    const full = /'key': '([0-9a-f]{64})'/.exec(
      (
        await vastai(
          'create',
          'api-key',
          '--name',
          'full',
          '--permission_file',
          writePerm({ api: { user_read: {}, user_write: {} } }),
        )
      ).out,
    )![1]!;
    const reset = await vastai('reset', 'api-key', '--api-key', full);
    const fresh = /([0-9a-f]{64})/.exec(reset.out)?.[1];
    expect(fresh).toBeDefined();
    expect((await vastai('show', 'user', '--raw', '--api-key', full)).out).toContain('"status_code": 401');
    expect(JSON.parse((await vastai('show', 'user', '--raw', '--api-key', fresh!)).stdout).id).toBe(1);
  });

  it('shows, creates and removes team roles', async () => {
    expect(JSON.parse((await vastai('show', 'team-role', 'member', '--raw')).stdout)).toMatchObject({
      id: 3,
      name: 'member',
    });
    expect((await vastai('show', 'team-role', 'nobody')).out).toContain(
      'Failed with error 404: Team role nobody not found',
    );
    expect(
      (
        await vastai(
          'create',
          'team-role',
          '--name',
          'ops',
          '--permissions',
          writePerm({ api: { misc: {} } }),
        )
      ).out,
    ).toContain("'name': 'ops'");
    expect((await vastai('remove', 'team-role', 'ops')).out).toContain("'success': True");
    expect((await vastai('show', 'team-role', 'ops')).out).toContain('404');
  });

  describe('marketplace: search, offers, machines', () => {
    const register = async (extra: object) => {
      const res = await request(app.getHttpServer())
        .post('/api/v0/machines/')
        .set('Authorization', `Bearer ${ADMIN_KEY}`)
        .send({ ...HOST_HARDWARE, ...extra })
        .expect(201);
      return res.body.id as number;
    };
    const verify = (id: number) =>
      request(app.getHttpServer())
        .put(`/api/v0/machines/${id}/verification/`)
        .set('Authorization', `Bearer ${ADMIN_KEY}`)
        .send({ verification: 'verified' })
        .expect(200);

    it('lists machines with `list machine` and finds them with `search offers`, filters, order and bid type included', async () => {
      const big = await register({ hostname: 'rig-4090' });
      const small = await register({ hostname: 'rig-3090', gpu_name: 'RTX 3090', num_gpus: 1 });
      for (const [id, price] of [
        [big, '0.5'],
        [small, '0.2'],
      ] as const) {
        const listed = await vastai(
          'list',
          'machine',
          String(id),
          '-g',
          price,
          '-s',
          '0.15',
          '-u',
          '0.01',
          '-d',
          '0.01',
          '-b',
          '0.3',
          '-m',
          '1',
          '-e',
          '12/31/2030',
        );
        expect(listed.out).toContain(`offers created/updated for machine ${id}`);
        await verify(id);
      }
      const offers = JSON.parse(
        (await vastai('search', 'offers', 'gpu_name=RTX_4090 num_gpus>=2', '--raw')).stdout,
      ) as Array<{ gpu_name: string; num_gpus: number; machine_id: number }>;
      expect(offers.length).toBeGreaterThan(0);
      expect(offers.every((o) => o.gpu_name === 'RTX 4090' && o.num_gpus >= 2 && o.machine_id === big)).toBe(
        true,
      );
      const table = await vastai('search', 'offers', 'gpu_name=RTX_4090 num_gpus>=2');
      expect(table.out).toContain('RTX_4090');

      const cheapestFirst = JSON.parse(
        (await vastai('search', 'offers', '-o', 'dph+', '--raw')).stdout,
      ) as Array<{ dph_total: number }>;
      const prices = cheapestFirst.map((o) => o.dph_total);
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
      const bids = JSON.parse(
        (await vastai('search', 'offers', '-b', 'gpu_name=RTX_3090', '--raw')).stdout,
      ) as Array<{ machine_id: number; dph_total: number }>;
      expect(bids.map((o) => o.machine_id)).toEqual([small]);
      expect(bids[0]!.dph_total).toBeCloseTo(0.3, 1); // interruptible: priced at the machine's min bid ($0.3/GPU) plus storage
    });

    it('`list machine` again with only a new GPU price keeps the storage price, min bid and end date', async () => {
      const id = await register({ hostname: 'rig-reprice', gpu_name: 'RTX 3090', num_gpus: 1 });
      await vastai('list', 'machine', String(id), '-g', '0.2', '-s', '0.15', '-b', '0.1', '-e', '12/31/2030');
      const before = JSON.parse((await vastai('show', 'machine', String(id), '--raw')).stdout) as Array<
        Record<string, unknown>
      >;
      const repriced = await vastai('list', 'machine', String(id), '-g', '0.25');
      expect(repriced.out).toContain(`offers created/updated for machine ${id}`);
      const [after] = JSON.parse((await vastai('show', 'machine', String(id), '--raw')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(after).toMatchObject({
        listed_gpu_cost: 0.25,
        listed_storage_cost: 0.15,
        min_bid_price: 0.1,
        end_date: before[0]!.end_date,
      });
      expect(after!.end_date).not.toBeNull();
    });

    it('creates, searches, edits (new hash) and deletes a template with the CLI', async () => {
      const created = await vastai(
        'create',
        'template',
        '--name',
        'cli-t1',
        '--image',
        'pytorch/pytorch',
        '--image_tag',
        'latest',
        '--env',
        '-p 8080:8080',
        '--ssh',
        '--direct',
        '--onstart-cmd',
        'echo hi',
        '--search_params',
        'gpu_ram>=23 num_gpus=1',
        '--disk_space',
        '20',
        '--readme',
        'r',
        '--desc',
        'd',
      );
      expect(created.out).toContain('New Template');
      const found = JSON.parse(
        (await vastai('search', 'templates', 'name=cli-t1', '--raw')).stdout,
      ) as Array<{ id: number; hash_id: string; env: string }>;
      expect(found).toHaveLength(1);
      expect(found[0]!.env).toBe('-p 8080:8080');
      await vastai(
        'update',
        'template',
        found[0]!.hash_id,
        '--name',
        'cli-t1',
        '--image',
        'pytorch/pytorch',
        '--desc',
        'd2',
      );
      const edited = JSON.parse(
        (await vastai('search', 'templates', 'name=cli-t1', '--raw')).stdout,
      ) as Array<{ id: number; hash_id: string; desc: string }>;
      expect(edited[0]).toMatchObject({ id: found[0]!.id, desc: 'd2' });
      expect(edited[0]!.hash_id).not.toBe(found[0]!.hash_id);
      expect((await vastai('delete', 'template', '--template-id', String(found[0]!.id))).out).toContain(
        `Template ${found[0]!.id} deleted`,
      );
      expect(JSON.parse((await vastai('search', 'templates', 'name=cli-t1', '--raw')).stdout)).toEqual([]);
    });
  });

  function writePerm(value: object): string {
    const file = join(home, `perm-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  }
});
