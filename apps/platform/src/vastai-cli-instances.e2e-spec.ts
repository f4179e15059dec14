import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { ed25519PublicKeyLine, eventually } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { simulatedHostKeys } from './testing/simulated-host-keys';
import { grantCredit } from './testing/users';

// Renters here have test credit; the billing meter is off (billing.e2e-spec.ts bills), so no run stops an instance mid-test.
const NO_BILLING_TIMER = { billingIntervalMs: 0 };

const run = promisify(execFile);
const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-instances-admin-key';

/**
 * The real `vastai` CLI renting on the embedded platform (simulated hosts): search offers, create
 * instance, show instance(s), ssh-url, stop, start, label, logs, reboot, destroy. The CLI exits 0 on HTTP errors, so
 * output is asserted.
 */
describe('the vastai CLI renting instances on the embedded platform', () => {
  let app: INestApplication;
  let db: Database;
  let env: NodeJS.ProcessEnv;
  let machineId: number;
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));

  const vastai = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(CLI, args, { env, timeout: 60_000 });
      return { stdout, stderr, out: stdout + stderr, code: 0 };
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; code?: number };
      return {
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? '',
        out: `${e.stdout ?? ''}${e.stderr ?? ''}`,
        code: e.code ?? 1,
      };
    }
  };
  const http = () => request(app.getHttpServer());
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
  const showInstance = async (id: number) =>
    JSON.parse((await vastai('show', 'instance', String(id), '--raw')).stdout) as Record<string, unknown>;
  /**
   * Waits until the instance is running, polling the API the CLI calls (each CLI run is a Python start, ~1 s of
   * CPU: polled back to back on a loaded machine they took most of the test's time), then reads it once with the
   * CLI.
   */
  const runningByCli = async (id: number, what: string) => {
    await eventually(
      async () => {
        const res = await http().get(`/api/v0/instances/${id}/`).set(admin).expect(200);
        return res.body.instances?.actual_status === 'running' ? true : undefined;
      },
      30_000,
      what,
    );
    const row = await showInstance(id);
    expect(row.actual_status).toBe('running');
    return row;
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
      PYTHONDONTWRITEBYTECODE: '1',
    };
    const reg = await http()
      .post('/api/v0/machines/')
      .set(admin)
      .send({
        gpu_name: 'RTX 4090',
        num_gpus: 4,
        gpu_ram: 24564,
        cuda_max_good: 12.4,
        driver_version: '550.54.15',
        compute_cap: 890,
        cpu_cores: 32,
        cpu_ram: 128000,
        disk_space: 2000,
        inet_up: 900,
        inet_down: 950,
        direct_port_count: 100,
        public_ipaddr: '203.0.113.9',
        geolocation: 'US',
      })
      .expect(201);
    machineId = reg.body.machine_id;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({
        machine: machineId,
        price_gpu: 0.5,
        price_disk: 0.15,
        price_inetu: 0.01,
        price_inetd: 0.01,
        price_min_bid: 0.3,
        min_chunk: 1,
        end_date: 4102444800.0,
      })
      .expect(200);
    await http()
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(admin)
      .send({ verification: 'verified' })
      .expect(200);
    // The admin rents here: renting needs credit.
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
    // instance-lifecycle learns of the machine over the transport: a too-low bid is refused once it has
    await eventually(
      async () =>
        (
          await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(admin)
            .send({ image: 'x', price: 0.01 })
        ).status === 400
          ? true
          : undefined,
      30_000,
      'the machine',
    );
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('searches, creates, polls to running, stops, starts, labels, reads logs, reboots and destroys', async () => {
    const offers = JSON.parse(
      (await vastai('search', 'offers', `machine_id=${machineId} num_gpus=4`, '--raw')).stdout,
    ) as { id: number }[];
    expect(offers).toHaveLength(1);
    const created = await vastai(
      'create',
      'instance',
      String(offers[0]!.id),
      '--image',
      'pytorch/pytorch',
      '--disk',
      '40',
      '--ssh',
      '--direct',
      '--env',
      '-e TZ=UTC -p 8080:8080',
      '--label',
      'cli',
      '--raw',
    );
    const answer = JSON.parse(created.stdout) as { success: boolean; new_contract: number };
    expect(answer.success).toBe(true);
    const id = answer.new_contract;

    expect(await showInstance(id)).toMatchObject({ id, label: 'cli', intended_status: 'running' });
    const running = await runningByCli(id, 'running');
    expect(running).toMatchObject({ ssh_host: '203.0.113.9', image_runtype: 'ssh_direct' });
    const listed = JSON.parse((await vastai('show', 'instances', '--raw')).stdout) as { id: number }[];
    expect(listed.map((r) => r.id)).toContain(id);
    const table = (await vastai('show', 'instances')).out;
    expect(table).toContain(String(id));
    // Table mode asks GET /instances/filters/ first and shows the values its filters can take.
    expect(table).toMatch(/--status:\s+.*running/);
    const ids = async (...filters: string[]) =>
      (JSON.parse((await vastai('show', 'instances', ...filters, '--raw')).stdout) as { id: number }[]).map(
        (r) => r.id,
      );
    expect(await ids('--status', 'running', '--gpu-name', 'RTX 4090')).toContain(id);
    expect(await ids('--status', 'exited')).not.toContain(id);
    expect(await ids('--verification', 'unverified', 'verified', 'deverified')).toContain(id);
    expect((await vastai('ssh-url', String(id))).out).toContain(
      `ssh://root@203.0.113.9:${String(running.ssh_port)}`,
    );

    expect((await vastai('stop', 'instance', String(id))).out).toMatch(/stopping|success/i);
    expect(await showInstance(id)).toMatchObject({ intended_status: 'stopped' });
    await vastai('start', 'instance', String(id));
    expect(await showInstance(id)).toMatchObject({ intended_status: 'running' });
    await vastai('label', 'instance', String(id), 'my label_x');
    expect(await showInstance(id)).toMatchObject({ label: 'my label_x' });
    await runningByCli(id, 'running again');
    const logs = await vastai('logs', String(id), '--tail', '5');
    expect(logs.out).toContain('container ready');
    expect((await vastai('reboot', 'instance', String(id))).out).not.toContain('Failed with error');

    expect((await vastai('destroy', 'instance', String(id), '-y')).out).not.toContain('Failed with error');
    const gone = await vastai('show', 'instance', String(id), '--raw');
    expect(gone.out).toContain('"instances": null');
  }, 120_000);

  it('attaches an SSH key from a .pub file and detaches it with attach ssh / detach ssh; the host holds them', async () => {
    const created = await vastai(
      'create',
      'instance',
      String(machineId * 1000 + 1),
      '--image',
      'busybox',
      '--ssh',
      '--direct',
      '--raw',
    );
    const id = (JSON.parse(created.stdout) as { new_contract: number }).new_contract;
    const key = ed25519PublicKeyLine('cli@laptop');
    const pub = join(home, 'id_ed25519.pub');
    writeFileSync(pub, `${key}\n`);
    const hostKeys = (expected: string[]) => simulatedHostKeys(app, id, expected);

    const attached = await vastai('attach', 'ssh', String(id), pub);
    expect(attached.code).toBe(0);
    expect(attached.out).toContain(`'msg': 'SSH key 1 attached to instance ${id}'`);
    await hostKeys([key]);
    // The key's text works as well as its file, and is the same attachment.
    expect((await vastai('attach', 'ssh', String(id), key)).out).toContain("'id': 1");
    const foreign = await vastai('detach', 'ssh', String(id), '7');
    expect(foreign.out).toMatch(/404|ssh_key_not_found/);
    const detached = await vastai('detach', 'ssh', String(id), '1');
    expect(detached.out).toContain(`SSH key 1 detached from instance ${id}`);
    await hostKeys([]);
    await vastai('destroy', 'instance', String(id), '-y');
  }, 120_000);

  it('creates instances in bulk and launches the cheapest matching offer', async () => {
    const bulk = await vastai(
      'create',
      'instances',
      String(machineId * 1000 + 1),
      String(machineId * 1000 + 2),
      '--image',
      'busybox',
      '--disk',
      '10',
    );
    expect(bulk.out).toMatch(/Started\. \{.*'new_contracts': \[\d+, \d+\]/);
    const created = await eventually(
      async () => {
        const rows = JSON.parse((await vastai('show', 'instances', '--raw')).stdout) as Array<{
          id: number;
          num_gpus: number;
        }>;
        return rows.length >= 2 ? rows : undefined;
      },
      30_000,
      'two instances',
    );
    expect(created.map((r) => r.num_gpus).sort()).toEqual([1, 2]);

    const launched = await vastai(
      'launch',
      'instance',
      '-g',
      'RTX_4090',
      '-n',
      '1',
      '-i',
      'busybox',
      '--raw',
    );
    const answer = JSON.parse(launched.stdout) as { success: boolean; new_contract: number };
    expect(answer).toMatchObject({ success: true, new_contract: expect.any(Number) });
    expect(await showInstance(answer.new_contract)).toMatchObject({ gpu_name: 'RTX 4090', num_gpus: 1 });

    const ids = [...created.map((r) => r.id), answer.new_contract];
    expect((await vastai('destroy', 'instances', ...ids.map(String), '-y')).out).not.toContain(
      'Failed with error',
    );
  }, 120_000);
});
