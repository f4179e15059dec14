import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { DockerCopyExecutor } from '@rigmarket/sync-maintenance';
import { eventually } from '@rigmarket/testing';
import type Docker from 'dockerode';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { InstanceContainers, rentContainerPair } from './testing/instance-containers';

const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-sync-maint-admin-key';
const SIZE = 8 * 1024 * 1024;

/**
 * Acceptance: the real `vastai` CLI (answering its y/n prompts on stdin) against the embedded platform:
 * schedule maint, show maints, cancel maint, copy (a real copy between two containers on the test
 * Docker Engine), cancel sync, cancel copy and cloud copy. The CLI exits 0 on HTTP errors, so output is asserted.
 */
describe('the vastai CLI for remote syncs and maintenance windows', () => {
  const containers = new InstanceContainers();
  let app: INestApplication;
  let db: Database;
  let env: NodeJS.ProcessEnv;
  let machineId: number;
  let src: number;
  let dst: number;
  let source: Docker.Container;
  let destination: Docker.Container;
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));
  const http = () => request(app.getHttpServer());
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };

  const vastai = (args: string[], input = '') =>
    new Promise<{ out: string; code: number | null }>((resolve, reject) => {
      const child = spawn(CLI, args, { env });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ out, code });
      });
      child.stdin.end(input);
    });
  const show = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/?owner=me`).set(admin).expect(200)).body.instances as {
      status_msg: string | null;
      remote_sync: { job_id: number; status: string } | null;
    };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    // 2 MB/s: an 8 MB copy runs long enough to be canceled through the CLI
    const executor = new DockerCopyExecutor({
      docker: containers.docker,
      bytesPerSecond: 2 * 1024 * 1024,
      progressIntervalMs: 200,
      resolve: containers.resolver,
    });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY },
      sync: { copyExecutor: executor },
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
    ({ machineId, src, dst, source, destination } = await rentContainerPair(
      app.getHttpServer(),
      admin,
      containers,
      SIZE,
    ));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await containers.removeAll();
  });

  it('schedule maint, show maints, cancel maint (answering y), and the unknown-machine error', async () => {
    const sdate = Math.floor(Date.now() / 1000) + 86400;
    const scheduled = await vastai(
      [
        'schedule',
        'maint',
        String(machineId),
        '--sdate',
        String(sdate),
        '--duration',
        '2',
        '--maintenance_category',
        'power',
      ],
      'y\n',
    );
    expect(scheduled.out).toContain('Continue? [y/n]');
    expect(scheduled.out).toContain('success');
    expect(scheduled.out).not.toContain('Failed with error');

    const shown = await vastai(['show', 'maints', '--ids', `${machineId},999999`, '--raw']);
    expect(JSON.parse(shown.out)).toEqual([
      {
        machine_id: machineId,
        start_time: sdate,
        end_time: sdate + 7200,
        duration_hours: 2,
        maintenance_category: 'power',
        window_id: expect.any(Number),
      },
    ]);
    const table = await vastai(['show', 'maints', '--ids', String(machineId)]);
    expect(table.out).toContain('power');
    // renters on the machine see it on their instances
    expect(
      (
        (await http().get(`/api/v0/instances/${dst}/?owner=me`).set(admin).expect(200)).body.instances as {
          upcoming_maintenance: unknown;
        }
      ).upcoming_maintenance,
    ).toMatchObject({ start_time: sdate });

    // answering n sends nothing
    await vastai(['cancel', 'maint', String(machineId)], 'n\n');
    expect(
      JSON.parse((await vastai(['show', 'maints', '--ids', String(machineId), '--raw'])).out),
    ).toHaveLength(1);
    const canceled = await vastai(['cancel', 'maint', String(machineId)], 'y\n');
    expect(canceled.out).toContain(`Cancel maintenance window(s) scheduled for machine ${machineId} success`);
    expect(JSON.parse((await vastai(['show', 'maints', '--ids', String(machineId), '--raw'])).out)).toEqual(
      [],
    );

    const unknown = await vastai(['cancel', 'maint', '999999'], 'y\n');
    expect(unknown.out).toContain('Failed with error 404: no such machine id');
  }, 120_000);

  it('copy between two instances, cancel sync half-way, copy again to identical bytes; and the cancel errors', async () => {
    const from = `${src}:/data/big.bin`;
    const to = `${dst}:/data/`;
    const started = await eventually(
      async () => {
        const r = await vastai(['copy', from, to]);
        return r.out.includes('Remote to Remote copy initiated') ? r : undefined;
      },
      30_000,
      'the instances in sync-maintenance',
    );
    expect(started.out).not.toContain('Failed with error');
    const first = await eventually(
      async () => {
        const row = await show(dst);
        return row.remote_sync?.status === 'running' && /\(([2-9]\d)%\)/.test(row.status_msg ?? '')
          ? row.remote_sync
          : undefined;
      },
      30_000,
      'the copy running',
    );

    const canceled = await vastai(['cancel', 'sync', String(dst)]);
    expect(canceled.out).toContain('Remote copy canceled');
    await eventually(
      async () => ((await show(dst)).remote_sync?.status === 'canceled' ? true : undefined),
      10_000,
      'canceled',
    );
    expect(await containers.size(destination, '/data/big.bin')).toBeLessThan(SIZE);

    await vastai(['copy', from, to]);
    await eventually(
      async () => {
        const row = await show(dst);
        return row.remote_sync &&
          row.remote_sync.job_id !== first.job_id &&
          row.remote_sync.status === 'completed'
          ? true
          : undefined;
      },
      60_000,
      'the second copy complete',
    );
    expect(await containers.md5(destination, '/data/big.bin')).toBe(
      await containers.md5(source, '/data/big.bin'),
    );

    expect((await vastai(['cancel', 'sync', '999999'])).out).toContain(
      'Failed with error 404: no such instance',
    );
    expect((await vastai(['cancel', 'sync', 'abc'])).out).toContain('invalid dst_id');
    expect((await vastai(['cancel', 'copy', String(dst)])).out).not.toContain('Failed with error');

    // cloud copy: recorded, then failed clearly (no cloud connection is reachable from the platform)
    const cloud = await vastai([
      'cloud',
      'copy',
      '--src',
      '/folder',
      '--dst',
      '/workspace',
      '--instance',
      String(dst),
      '--connection',
      '1001',
      '--transfer',
      'Cloud To Instance',
    ]);
    expect(cloud.out).toContain('Cloud Copy Started');
    const failed = await eventually(
      async () => {
        const row = await show(dst);
        return row.remote_sync?.status === 'failed' ? row : undefined;
      },
      10_000,
      'the cloud copy failed',
    );
    expect(failed.status_msg).toContain('no cloud connections');
  }, 120_000);
});
