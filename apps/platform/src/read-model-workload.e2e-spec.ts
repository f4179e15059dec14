import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database } from '@rigmarket/event-sourcing';
import { type PlatformHarness, eventually, startPlatform } from '@rigmarket/testing';
import { DEMO_CREDIT, seedDemoHosts } from './demo-hosts';
import { ALL_CONTEXTS, allContextModules } from './platform';
import { verify } from './verify';

/**
 * Read models equal their events under concurrent load (docs/reliability.md). Embedded: the platform
 * (`node apps/platform/dist/main.js`, billing every second) under three renters renting, stopping,
 * starting and destroying, plus template, API key and credit traffic, for WORKLOAD_MS; then a graceful
 * stop and `rigmarket verify`'s comparison of every read model with its replay, table by table.
 * Distributed: the four contexts on PostgreSQL and Kafka, the same workload, every instance destroyed,
 * then the same comparison once the events have arrived.
 */
const ROOT = join(__dirname, '..', '..', '..');
const ADMIN_KEY = 'read-model-workload-admin-key-0123';
const WORKLOAD_MS = 20_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/**
 * Three renters renting 1-GPU offers of the demo hosts, stopping, starting and destroying them, one
 * client creating, editing and deleting templates, one creating and revoking API keys and granting
 * credit, for WORKLOAD_MS. Answers the instances still live at the end.
 */
async function workload(call: Call): Promise<number[]> {
  const offers = await eventually(
    async () => {
      const found = (await call('POST', '/bundles/', {})).body.offers as Array<{ id: number }> | undefined;
      return found && found.length >= 3 ? found : undefined;
    },
    30_000,
    'the demo offers',
  );
  const oneGpu = [...new Set(offers.map((o) => Math.floor(o.id / 1000)))].map((m) => m * 1000 + 1);
  const deadline = Date.now() + WORKLOAD_MS;
  const going = () => Date.now() < deadline;
  const pause = () => new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
  const pick = <T>(list: T[]): T | undefined => list.splice(Math.floor(Math.random() * list.length), 1)[0];

  const live: number[] = [];
  const renter = async () => {
    while (going()) {
      if (live.length < 6) {
        const res = await call('PUT', `/asks/${oneGpu[Math.floor(Math.random() * oneGpu.length)]}/`, {
          image: 'busybox',
          runtype: 'ssh_direct',
          disk: 8,
        });
        if (res.status === 200) live.push(res.body.new_contract as number);
      }
      const id = pick(live);
      if (id !== undefined) {
        const roll = Math.random();
        if (roll < 0.3) await call('PUT', `/instances/${id}/`, { state: 'stopped' });
        else if (roll < 0.55) await call('PUT', `/instances/${id}/`, { state: 'running' });
        if (roll < 0.55 || (await call('DELETE', `/instances/${id}/`)).status !== 200) live.push(id);
      }
      await pause();
    }
  };
  const templates = async () => {
    const hashes: string[] = [];
    for (let i = 0; going(); i += 1) {
      const made = await call('POST', '/template/', { name: `t${i}`, image: 'busybox' });
      const hash = (made.body.template as { hash_id?: string } | undefined)?.hash_id;
      if (hash) hashes.push(hash);
      const edit = pick(hashes);
      if (edit && Math.random() < 0.5) {
        await call('PUT', '/template/', { hash_id: edit, name: `e${i}` });
        hashes.push(edit);
      } else if (edit) await call('DELETE', '/template/', { hash_id: edit });
      await pause();
    }
  };
  const keysAndCredit = async () => {
    while (going()) {
      const made = await call('POST', '/auth/apikeys/', { name: 'workload' });
      const keyId = made.body.id as number | undefined;
      if (keyId !== undefined && Math.random() < 0.7) await call('DELETE', `/auth/apikeys/${keyId}/`);
      await call('POST', '/credit', { user_id: 1, amount: 0.37 });
      await pause();
    }
  };
  await Promise.all([renter(), renter(), renter(), templates(), keysAndCredit()]);
  return live;
}

describe('read models equal their events after a concurrent workload (embedded)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-workload-'));
  let port = 0;
  let child: ChildProcess | undefined;
  let output = '';
  const answers = new Map<string, number>();

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v0${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const key = `${method} ${path.replace(/\d+/g, 'N')} ${res.status}`;
    answers.set(key, (answers.get(key) ?? 0) + 1);
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.secrets.json`, { force: true });
  });

  it('every read model equals its replay, table by table', async () => {
    port = await freePort();
    const proc = spawn(process.execPath, [join(ROOT, 'apps/platform/dist/main.js')], {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        RIGMARKET_DATA_DIR: dataDir,
        RIGMARKET_ADMIN_KEY: ADMIN_KEY,
        RIGMARKET_BILLING_INTERVAL_MS: '1000',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await eventually(
      async () => ((await call('GET', '/users/current/')).status === 200 ? true : undefined),
      60_000,
      'the platform answering',
    );
    await workload(call);
    // let the simulated host and the billing runs settle what the workload started
    await new Promise((r) => setTimeout(r, 3_000));

    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);

    const summary = JSON.stringify(Object.fromEntries([...answers].sort()));
    const rents = [...answers]
      .filter(([k]) => k.startsWith('PUT /asks/N/ 200'))
      .reduce((n, [, v]) => n + v, 0);
    expect(rents).toBeGreaterThan(5);
    const db = await Database.connect({ kind: 'pglite', dataDir });
    const lines: string[] = [];
    try {
      const report = await verify(db, ALL_CONTEXTS, (line) => lines.push(line));
      const problems = lines.filter((l) => !/: equal$|: ok$/.test(l));
      expect({ problems, errors: output.split('\n').filter((l) => /ERROR|"level":50/.test(l)) }).toEqual({
        problems: [],
        errors: [],
      });
      expect(report.ok).toBe(true);
    } finally {
      await db.close();
      process.stdout.write(`read-model workload: ${summary}\n`);
    }
  }, 120_000);
});

describe('read models equal their events after a concurrent workload (distributed: PostgreSQL, Kafka)', () => {
  let harness: PlatformHarness | undefined;
  afterAll(async () => {
    await harness?.close();
  });

  it('every read model equals its replay, table by table', async () => {
    harness = await startPlatform(
      'distributed',
      allContextModules({ adminKey: ADMIN_KEY }, {}, { billingIntervalMs: 1000 }),
    );
    const server = (await harness.app.listen(0, '127.0.0.1')) as Server;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let rents = 0;
    const call: Call = async (method, path, body) => {
      const res = await fetch(`${base}/api/v0${path}`, {
        method,
        headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      if (method === 'PUT' && path.startsWith('/asks/') && res.status === 200) rents += 1;
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    };
    await seedDemoHosts(base, ADMIN_KEY);
    expect((await call('POST', '/credit', { user_id: 1, amount: DEMO_CREDIT })).status).toBe(200);
    await eventually(
      async () => (Number((await call('GET', '/users/current/')).body.credit) > 0 ? true : undefined),
      30_000,
      'the credit',
    );
    const live = await workload(call);
    expect(rents).toBeGreaterThan(5);
    // destroyed instances are no longer billed: the ledger comes to rest
    for (const id of live) await call('DELETE', `/instances/${id}/`);
    const db = harness.db;
    const lines: string[] = [];
    const ok = await eventually(
      async () => {
        lines.length = 0;
        return (await verify(db, ALL_CONTEXTS, (line) => lines.push(line))).ok ? true : undefined;
      },
      60_000,
      'every read model equal to its replay',
    ).catch(() => false);
    expect(lines.filter((l) => !/: equal$|: ok$/.test(l))).toEqual([]);
    expect(ok).toBe(true);
  }, 180_000);
});
