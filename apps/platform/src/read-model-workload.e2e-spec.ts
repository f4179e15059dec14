import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database } from '@rigmarket/event-sourcing';
import { type PlatformHarness, eventually, startPlatform } from '@rigmarket/testing';
import { DEMO_CREDIT, seedDemoHosts } from './demo-hosts';
import { ALL_CONTEXTS, allContextModules } from './platform';
import { type Call, type EmbeddedProcess, startEmbeddedProcess, workload } from './testing/renter-workload';
import { verify } from './verify';

/**
 * Read models equal their events under concurrent load (docs/reliability.md). Embedded: the platform
 * (`node apps/platform/dist/main.js`, billing every second) under three renters renting, stopping,
 * starting and destroying, plus template, API key and credit traffic, for WORKLOAD_MS; then a graceful
 * stop and `rigmarket verify`'s comparison of every read model with its replay, table by table.
 * Distributed: the four contexts on PostgreSQL and Kafka, the same workload, every instance destroyed,
 * then the same comparison once the events have arrived.
 */
const ADMIN_KEY = 'read-model-workload-admin-key-0123';
const WORKLOAD_MS = 20_000;

describe('read models equal their events after a concurrent workload (embedded)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-workload-'));
  let platform: EmbeddedProcess | undefined;
  const answers = new Map<string, number>();

  afterAll(async () => {
    if (platform && platform.proc.exitCode === null) platform.proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.secrets.json`, { force: true });
  });

  it('every read model equals its replay, table by table', async () => {
    platform = await startEmbeddedProcess(dataDir, ADMIN_KEY, (method, path, status) => {
      const key = `${method} ${path.replace(/\d+/g, 'N')} ${status}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
    });
    const { call } = platform;
    await workload(call, WORKLOAD_MS);
    // let the simulated host and the billing runs settle what the workload started
    await new Promise((r) => setTimeout(r, 3_000));

    expect(await platform.stop()).toBe(0);

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
      expect({
        problems,
        errors: platform
          .output()
          .split('\n')
          .filter((l) => /ERROR|"level":50/.test(l)),
      }).toEqual({
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
    const live = await workload(call, WORKLOAD_MS);
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
