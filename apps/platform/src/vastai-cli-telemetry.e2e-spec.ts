import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { HostAgent } from '@rigmarket/host-agent';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { InProcessTransport } from '@rigmarket/messaging';
import { INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { verifiedUser } from './testing/users';

const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-telemetry-admin-key';

/**
 * A stand-in `nvidia-smi` printing what the real one prints on a 2x RTX 4090 host: the inventory query the
 * agent registers with, the banner, and the sampler's query (GPU 0 steady, GPU 1's utilisation moving).
 */
const NVIDIA_SMI = `#!/bin/bash
case "$*" in
  *utilization.gpu*)
    n=$(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 )); echo $n > "$0.count"
    echo "0, NVIDIA GeForce RTX 4090, 87, 20112, 24564, 71, 402.17"
    echo "1, NVIDIA GeForce RTX 4090, $(( (n * 10) % 100 )), 1, 24564, 34, [N/A]" ;;
  *--query-gpu=*)
    echo "0, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9"
    echo "1, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9" ;;
  *)
    echo "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |" ;;
esac
`;

interface Device {
  machine_id: number;
  gpu_index: number;
  utilization: number | null;
  memory_used: number | null;
  memory_total: number | null;
  temperature: number | null;
  power: number | null;
}
interface CurrentRow {
  gpu_name: string;
  total: number;
  available: number;
  sampled_gpus: number;
  usage: number | null;
  temperature: number | null;
  price_median: number | null;
  devices: Device[];
}

/**
 * Acceptance: a host agent samples its GPUs (the stand-in nvidia-smi on PATH) every 300 ms over the agent
 * channel, and the real `vastai` CLI shows the samples (`show gpu-metrics`), their history (`show
 * gpu-trends`, 1 s buckets here) and the market's GPUs by place (`show gpu-locations`); another user sees
 * only their own machine.
 */
describe('the vastai CLI for GPU metrics', () => {
  let app: INestApplication;
  let db: Database;
  let agent: HostAgent | undefined;
  let otherKey: string;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));
  const bin = mkdtempSync(join(tmpdir(), 'nvidia-smi-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'agent-state-'));
  const savedPath = process.env.PATH;
  let baseUrl = '';
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  const vastai = (args: string[], key = ADMIN_KEY) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(CLI, args, {
        env: {
          PATH: savedPath,
          HOME: home,
          VAST_URL: baseUrl,
          VASTAI_NO_UPDATE_CHECK: '1',
          VAST_API_KEY: key,
          PYTHONDONTWRITEBYTECODE: '1',
        },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', () => {
        clearTimeout(timer);
        resolve(out);
      });
      child.stdin.end();
    });
  const raw = async <T>(args: string[], key = ADMIN_KEY): Promise<T> => {
    const out = await vastai([...args, '--raw'], key);
    try {
      return JSON.parse(out) as T;
    } catch {
      throw new Error(`vastai ${args.join(' ')} --raw printed no JSON: ${out}`);
    }
  };

  beforeAll(async () => {
    writeFileSync(join(bin, 'nvidia-smi'), NVIDIA_SMI);
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      instances: { gpuMetrics: { fineBucketSeconds: 1, minSampleIntervalMs: 100 } },
    });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    // the agent finds the stand-in as it would find the real nvidia-smi
    process.env.PATH = `${bin}:${savedPath}`;
    agent = await HostAgent.start({
      apiUrl: baseUrl,
      apiKey: ADMIN_KEY,
      stateDir,
      driver: 'simulated',
      publicAddress: '127.0.0.1',
      metricsIntervalMs: 300,
      log: () => undefined,
    });
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: agent.machineId, ...LIST_MACHINE_ASK })
      .expect(200);
    // another user, with a machine of their own (same GPU model, no agent, not listed)
    otherKey = await verifiedUser(app.getHttpServer(), mailer, 'host', ['/api/v0/metrics/gpu/current/']);
    await http().post('/api/v0/machines').set(as(otherKey)).send(HOST_HARDWARE).expect(201);
  }, 120_000);
  afterAll(async () => {
    process.env.PATH = savedPath;
    await agent?.stop();
    await app?.close();
    await db?.close();
    for (const dir of [home, bin, stateDir]) rmSync(dir, { recursive: true, force: true });
  });

  it("vastai show gpu-metrics: the stand-in's numbers per GPU, the counts and the listed price", async () => {
    const current = await eventually(
      async () => {
        const body = await raw<{ gpus: CurrentRow[] }>(['show', 'gpu-metrics']);
        return body.gpus[0]?.sampled_gpus === 2 ? body : undefined;
      },
      30_000,
      'two GPUs sampled',
    );
    expect(current.gpus).toHaveLength(1);
    const row = current.gpus[0] as CurrentRow;
    expect(row).toMatchObject({ gpu_name: 'RTX 4090', total: 2, available: 2, temperature: 52.5 });
    expect(row.price_median).toBe(LIST_MACHINE_ASK.price_gpu);
    expect(row.devices[0]).toMatchObject({
      machine_id: agent?.machineId,
      gpu_index: 0,
      utilization: 87,
      memory_used: 20112,
      memory_total: 24564,
      temperature: 71,
      power: 402.17,
    });
    expect(row.devices[1]).toMatchObject({ gpu_index: 1, temperature: 34, power: null });

    const table = await vastai(['show', 'gpu-metrics']);
    expect(table).toContain('Usage%');
    expect(table).toMatch(/RTX_4090\s+2\s+2\s+0\s+\d+\.\d/);
    // the filters the CLI sends
    expect((await raw<{ gpus: CurrentRow[] }>(['show', 'gpu-metrics', '--verified', 'true'])).gpus).toEqual(
      [],
    );
    expect(
      (await raw<{ gpus: CurrentRow[] }>(['show', 'gpu-metrics', '--num-gpus', '2'])).gpus[0]?.total,
    ).toBe(2);
  }, 90_000);

  it('vastai show gpu-trends: several points of the GPUs history, with the samples folded in', async () => {
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const now = Math.floor(Date.now() / 1000);
    type Trends = Record<
      string,
      { stats: { samples: number; utilization: number }; rows: Array<{ total: number; timestamp: number }> }
    >;
    const trends = await raw<Trends>([
      'show',
      'gpu-trends',
      'RTX 4090',
      '--start',
      String(now - 120),
      '--end',
      String(now + 1),
      '--step',
      '1',
    ]);
    const history = trends['RTX 4090'];
    expect(history?.rows.length).toBeGreaterThanOrEqual(3);
    expect(history?.rows.every((r) => r.total === 2)).toBe(true);
    expect(history?.stats.samples).toBeGreaterThanOrEqual(6);
    expect(history?.stats.utilization).toBeGreaterThan(40);
    const table = await vastai(['show', 'gpu-trends', 'RTX_4090', '--full']);
    expect(table).toContain('=== RTX 4090 ===');
    expect(table).toMatch(/\d{4}-\d\d-\d\d_\d\d:\d\d\s+0\s+0\s+0\s+2/);
  }, 60_000);

  it('vastai show gpu-locations: the whole market by model, place and state, no machine ids', async () => {
    type Locations = { locations: Array<Record<string, unknown>> };
    const all = await raw<Locations>(['show', 'gpu-locations', '--gpu', 'RTX_4090']);
    expect(all.locations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ gpu_name: 'RTX 4090', num_gpus: 2, state: 'available', verified: false }),
        expect.objectContaining({
          gpu_name: 'RTX 4090',
          num_gpus: 4,
          state: 'unavailable',
          country_code: HOST_HARDWARE.geolocation,
        }),
      ]),
    );
    expect(JSON.stringify(all)).not.toContain('machine_id');
    const unavailable = await raw<Locations>(['show', 'gpu-locations', '--state', 'unavailable'], otherKey);
    expect(unavailable.locations.map((l) => l.num_gpus)).toEqual([4]);
    expect(await vastai(['show', 'gpu-locations'])).toMatch(/RTX_4090\s+-\s+US\s+4\s+unavailable/);
  }, 60_000);

  it('vastai search benchmarks: the records the agent measured at start, with the query syntax the CLI sends', async () => {
    type Bench = {
      id: number;
      machine_id: number;
      type: string;
      value: number;
      gpu_name: string;
      num_gpus: number;
    };
    const all = await eventually(
      async () => {
        const rows = await raw<Bench[]>(['search', 'benchmarks', `machine_id=${agent?.machineId}`]);
        return rows.length === 2 ? rows : undefined;
      },
      30_000,
      "the agent's benchmarks",
    );
    expect(all.map((r) => r.type).sort()).toEqual(['cpu_sha256', 'disk_write']);
    for (const r of all)
      expect(r).toMatchObject({ gpu_name: 'RTX 4090', num_gpus: 2, value: expect.any(Number) });
    expect(all.every((r) => r.value > 0)).toBe(true);

    const disk = await raw<Bench[]>(['search', 'benchmarks', 'type=disk_write value>0']);
    expect(disk.map((r) => r.id)).toEqual(all.filter((r) => r.type === 'disk_write').map((r) => r.id));
    expect(await raw<Bench[]>(['search', 'benchmarks', 'type=disk_write value<0'])).toEqual([]);
    expect(await raw<Bench[]>(['search', 'benchmarks', 'machine_id=999999'])).toEqual([]);
    // one page at a time: the envelope with the next page's token
    const page = await raw<{ benchmarks: Bench[]; next_token: string | null }>([
      'search',
      'benchmarks',
      '--limit',
      '1',
    ]);
    expect(page.benchmarks).toHaveLength(1);
    expect(page.next_token).toBe('1');
    const table = await vastai(['search', 'benchmarks', 'type=cpu_sha256']);
    expect(table).toContain('mach_id');
    expect(table).toMatch(new RegExp(`\\b${agent?.machineId}\\s+RTX_4090\\s+2x\\s+\\d+\\.\\d\\d`));
    // records are public market data, as on the real service: another user finds them too
    expect(
      await raw<Bench[]>(['search', 'benchmarks', `machine_id=${agent?.machineId}`], otherKey),
    ).toHaveLength(2);

    expect(await settledRebuildMismatches(app.get<ContextRuntime>(INSTANCE_RUNTIME))).toEqual([]);
  }, 90_000);

  it("vastai self-test machine: finds the agent's machine by its offer and checks it (direct ports reported)", async () => {
    const out = await vastai(['self-test', 'machine', String(agent?.machineId), '--no-support-bundle']);
    expect(out).toContain(`Preflight diagnostics for machine ${agent?.machineId}`);
    // this small test host fails the RAM, core and bandwidth floors, but not the agent-reported ones
    expect(out).toContain('- System RAM');
    expect(out).not.toContain('Direct port count');
    expect(out).not.toContain('CUDA version');
    expect(out).not.toMatch(/no (valid )?offers? (found )?for machine/i);
  }, 60_000);

  it("another user never sees the host's GPU samples; a user without a machine is told so", async () => {
    const theirs = await raw<{ gpus: CurrentRow[] }>(['show', 'gpu-metrics'], otherKey);
    expect(theirs.gpus).toEqual([
      expect.objectContaining({ gpu_name: 'RTX 4090', total: 4, sampled_gpus: 0, devices: [], usage: null }),
    ]);
    const trends = await raw<Record<string, { rows: unknown[] }>>(['show', 'gpu-trends', 'all'], otherKey);
    expect(trends).toEqual({});

    const renter = await verifiedUser(app.getHttpServer(), mailer, 'renter', [
      '/api/v0/metrics/gpu/current/',
    ]);
    for (const command of ['gpu-metrics', 'gpu-trends', 'gpu-locations'])
      expect(await vastai(['show', command], renter)).toContain(
        'No metrics available. This endpoint is for hosts with active machines.',
      );
    // bad filters are the Error object, never a 500
    const bad = await http().get('/api/v0/metrics/gpu/history/?start=abc').set(as(otherKey)).expect(400);
    expect(bad.body).toMatchObject({ success: false, error: 'bad_request' });
  }, 60_000);
});
