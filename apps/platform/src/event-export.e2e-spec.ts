import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import { Database, contextProjections } from '@rigmarket/event-sourcing';
import { HostAgent } from '@rigmarket/host-agent';
import { createTestDatabase, eventually } from '@rigmarket/testing';
import { LIST_MACHINE_ASK } from './testing/fixtures';
import { runOperatorCli, runOperatorCliEmbedded } from './testing/operator-cli';
import { startEmbeddedProcess, workload } from './testing/renter-workload';
import { ALL_CONTEXTS } from './platform';

/**
 * The embedded -> distributed migration (docs/operations.md): an embedded platform under the read-model
 * workload for WORKLOAD_MS, stopped; `rigmarket export` of its PGlite folder; `rigmarket import` into an
 * empty PostgreSQL deployment (and into an empty embedded one). The events, chains and every read model
 * of the targets equal the source's, and so do the tables no rebuild restores (instance keys, host commands,
 * ...) and the id sequences; the moved embedded platform serves a live instance as the source did, and a
 * host agent that stayed up reconnects to it and takes its next command. A
 * non-empty target, an edited line and a truncated file are refused.
 */
const ADMIN_KEY = 'event-export-admin-key-0123456789';
const WORKLOAD_MS = 6_000;

/** Every read model table of every context, its rows as sorted JSON. */
async function readModels(db: Database): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {};
  for (const c of ALL_CONTEXTS)
    for (const p of contextProjections(c))
      for (const table of p.tables)
        tables[table] = (await db.query<Record<string, unknown>>(`SELECT * FROM ${table}`))
          .map((row) => JSON.stringify(row))
          .sort();
  return tables;
}

describe('rigmarket export and import: embedded to distributed', () => {
  const work = mkdtempSync(join(tmpdir(), 'rigmarket-export-'));
  const source = join(work, 'source');
  const exported = join(work, 'events.ndjson');
  const databases: Array<{ url: string; drop: () => Promise<void> }> = [];
  let child: ChildProcess | undefined;

  afterAll(async () => {
    await agent?.stop();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    for (const d of databases) await d.drop();
    rmSync(work, { recursive: true, force: true });
  });

  /** An instance live at the move: its id, instance key and poll answer in the source. */
  const kept: { id: number; key: string; poll: unknown } = { id: 0, key: '', poll: null };
  /** A host agent (simulated driver) serving a machine of the source, which reconnects to the moved platform. */
  let agent: HostAgent | undefined;
  const agentLog: string[] = [];
  let agentInstance = 0;
  let sourcePort = 0;
  /** Every carried table's rows and where the id sequences stand, per context (what no rebuild restores). */
  async function carried(db: Database): Promise<Record<string, unknown>> {
    const state: Record<string, unknown> = {};
    for (const c of ALL_CONTEXTS) {
      const schema = CONTEXT_SCHEMAS[c.context];
      for (const { table, orderBy } of c.carriedTables ?? [])
        state[`${schema}.${table}`] = await db.query(`SELECT * FROM ${schema}.${table} ORDER BY ${orderBy}`);
      state[`${schema} sequences`] = await db.query(
        `SELECT sequencename, last_value::text AS last_value FROM pg_sequences WHERE schemaname = $1 ORDER BY 1`,
        [schema],
      );
    }
    return state;
  }

  const freshDatabase = async () => {
    const d = await createTestDatabase();
    databases.push(d);
    return d.url;
  };

  it('moves every event, chain and read model of a workload from PGlite to PostgreSQL', async () => {
    const platform = await startEmbeddedProcess(source, ADMIN_KEY);
    child = platform.proc;
    const { call } = platform;
    await workload(call, WORKLOAD_MS);
    // One more instance, running, whose key and poll answer the moved deployment must still serve.
    const offers = (await call('POST', '/bundles/', {})).body.offers as Array<{ id: number }>;
    const rented = await call('PUT', `/asks/${offers[0]!.id}/`, {
      image: 'busybox',
      disk: 8,
      label: 'moved',
    });
    expect(rented.status).toBe(200);
    kept.id = rented.body.new_contract as number;
    kept.key = rented.body.instance_api_key as string;
    kept.poll = await eventually(
      async () => {
        const row = (await call('GET', `/instances/${kept.id}/`)).body.instances as {
          actual_status?: string;
        };
        return row?.actual_status === 'running' ? row : undefined;
      },
      30_000,
      'the kept instance running',
    );
    // A host agent's machine with a running instance: the agent stays up while the platform moves.
    sourcePort = Number(new URL(platform.base).port);
    agent = await HostAgent.start({
      apiUrl: platform.base,
      apiKey: ADMIN_KEY,
      stateDir: join(work, 'agent'),
      driver: 'simulated',
      simulateGpus: '1:RTX 4090',
      heartbeatIntervalMs: 5_000,
      log: (line) => agentLog.push(line),
    });
    const agentMachine = agent.machineId;
    expect(
      (await call('PUT', '/machines/create_asks/', { machine: agentMachine, ...LIST_MACHINE_ASK })).status,
    ).toBe(200);
    agentInstance = await eventually(
      async () => {
        const res = await call('PUT', `/asks/${agentMachine * 1000 + 1}/`, { image: 'busybox', disk: 8 });
        return res.status === 200 ? (res.body.new_contract as number) : undefined;
      },
      30_000,
      "the agent's machine rentable",
    );
    await eventually(
      async () =>
        ((await call('GET', `/instances/${agentInstance}/`)).body.instances as { actual_status?: string })
          ?.actual_status === 'running'
          ? true
          : undefined,
      30_000,
      "the agent's instance running",
    );
    await new Promise((r) => setTimeout(r, 2_000));
    expect({
      code: await platform.stop(),
      errors: platform
        .output()
        .split('\n')
        .filter((l) => /ERROR|"level":50/.test(l)),
    }).toEqual({ code: 0, errors: [] });

    const exportRun = await runOperatorCliEmbedded(source, 'export', exported);
    expect(exportRun.stderr).toMatch(/exported instance: \d+ event\(s\), head [0-9a-f]{64}/);
    expect(exportRun.code).toBe(0);
    const file = readFileSync(exported, 'utf8');
    const lines = file.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(50);

    // into an empty distributed deployment
    const target = await freshDatabase();
    const imported = await runOperatorCli(target, 'import', exported);
    expect(imported.stdout).toMatch(/imported identity: \d+ event\(s\)/);
    expect(imported.stdout).toContain('verify --chain: ok');
    expect(imported.stdout).toContain('import: ok');
    expect(imported.code).toBe(0);
    expect((await runOperatorCli(target, 'verify', '--chain')).code).toBe(0);
    expect((await runOperatorCli(target, 'verify')).code).toBe(0);

    // the same events (an export of the target is the same file) and the same read models
    const again = join(work, 'again.ndjson');
    expect((await runOperatorCli(target, 'export', again)).code).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(file);
    const sourceDb = await Database.connect({ kind: 'pglite', dataDir: source });
    const targetDb = await Database.connect({ kind: 'postgres', url: target });
    try {
      const before = await readModels(sourceDb);
      const after = await readModels(targetDb);
      expect(Object.values(after).reduce((n, rows) => n + rows.length, 0)).toBeGreaterThan(50);
      expect(after).toEqual(before);
      // and what is not rebuilt from events: instance keys, host commands, liveness... and the id sequences
      const carriedBefore = await carried(sourceDb);
      expect(carriedBefore[`${CONTEXT_SCHEMAS.instance}.host_commands`]).not.toEqual([]);
      expect(carriedBefore[`${CONTEXT_SCHEMAS.instance}.instance_keys`]).not.toEqual([]);
      expect(await carried(targetDb)).toEqual(carriedBefore);
      // appends go on from the imported chain heads
      const [head] = await targetDb.query<{ gp: string }>(
        `SELECT global_position::text AS gp FROM ${CONTEXT_SCHEMAS.identity}.event_chain_head`,
      );
      const [max] = await sourceDb.query<{ gp: string }>(
        `SELECT max(global_position)::text AS gp FROM ${CONTEXT_SCHEMAS.identity}.events`,
      );
      expect(head!.gp).toBe(max!.gp);
    } finally {
      await sourceDb.close();
      await targetDb.close();
    }

    // a deployment that has events is refused, and left as it was
    const twice = await runOperatorCli(target, 'import', exported);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('the target is not empty: identity has events');
  }, 240_000);

  it('loads the same file into an empty embedded deployment', async () => {
    const embedded = join(work, 'embedded-target');
    const run = await runOperatorCliEmbedded(embedded, 'import', exported);
    expect(run.stdout).toContain('import: ok');
    expect(run.code).toBe(0);
    const again = join(work, 'embedded-again.ndjson');
    expect((await runOperatorCliEmbedded(embedded, 'export', again)).code).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(exported, 'utf8'));
    const sourceDb = await Database.connect({ kind: 'pglite', dataDir: source });
    try {
      const before = await readModels(sourceDb);
      const carriedBefore = await carried(sourceDb);
      await sourceDb.close();
      const targetDb = await Database.connect({ kind: 'pglite', dataDir: embedded });
      try {
        expect(await readModels(targetDb)).toEqual(before);
        expect(await carried(targetDb)).toEqual(carriedBefore);
      } finally {
        await targetDb.close();
      }
    } finally {
      await sourceDb.close();
    }

    // The moved platform serves the instance as the source did: its poll answer, its instance key, its logs;
    // and a new rent gets a new id (the id sequences moved too), not one of an imported instance.
    // On the source's address, so that the agent reconnects by itself.
    const moved = await startEmbeddedProcess(embedded, ADMIN_KEY, undefined, sourcePort);
    child = moved.proc;
    try {
      expect((await moved.call('GET', `/instances/${kept.id}/`)).body.instances).toEqual(kept.poll);
      const byKey = await fetch(`${moved.base}/api/v0/instances/${kept.id}/`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${kept.key}`, 'Content-Type': 'application/json' },
        // An instance key may stop and start its own instance (not label it).
        body: JSON.stringify({ state: 'stopped' }),
      });
      expect(byKey.status).toBe(200);
      const logs = await moved.call('PUT', `/instances/request_logs/${kept.id}/`, { daemon_logs: 'true' });
      expect(logs.status).toBe(200);
      const text = await (await fetch(String(logs.body.result_url))).text();
      expect(text).toContain(`instance ${kept.id}`);
      const offers = (await moved.call('POST', '/bundles/', {})).body.offers as Array<{ id: number }>;
      const fresh = await moved.call('PUT', `/asks/${offers[0]!.id}/`, { image: 'busybox', disk: 8 });
      expect(fresh.status).toBe(200);
      expect(fresh.body.new_contract).toBeGreaterThan(agentInstance);

      // The agent reconnected; its instance still runs, and a new command reaches it: its id goes on from
      // the source's (the agent skips an id it already ran), so the instance stops.
      await eventually(
        async () => (agent?.channelConnected ? true : undefined),
        45_000,
        'the agent back',
      ).catch((error: Error) =>
        Promise.reject(new Error(`${error.message}\n${agentLog.slice(-20).join('\n')}`)),
      );
      const agentRow = async () =>
        (await moved.call('GET', `/instances/${agentInstance}/`)).body.instances as { actual_status: string };
      expect((await agentRow()).actual_status).toBe('running');
      expect((await moved.call('PUT', `/instances/${agentInstance}/`, { state: 'stopped' })).status).toBe(
        200,
      );
      await eventually(
        async () => ((await agentRow()).actual_status === 'stopped' ? true : undefined),
        30_000,
        'the agent stopped the instance',
      ).catch((error: Error) =>
        Promise.reject(new Error(`${error.message}\n${agentLog.slice(-20).join('\n')}`)),
      );
      expect(await moved.stop()).toBe(0);
    } finally {
      if (moved.proc.exitCode === null) moved.proc.kill('SIGKILL');
    }
  }, 240_000);

  it('refuses an edited line and a truncated file, loading nothing', async () => {
    const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
    const i = lines.findIndex((l) => l.includes('"type":"CreditGranted"'));
    expect(i).toBeGreaterThan(0);
    const edited = lines.map((l, n) =>
      n === i ? l.replace(/"amountMicros":\d+/, '"amountMicros":1000000000') : l,
    );
    expect(edited[i]).not.toBe(lines[i]);
    const editedFile = join(work, 'edited.ndjson');
    writeFileSync(editedFile, `${edited.join('\n')}\n`);
    const target = await freshDatabase();
    const refused = await runOperatorCli(target, 'import', editedFile);
    expect(refused.code).toBe(1);
    const gp = (JSON.parse(lines[i]!) as { globalPosition: string }).globalPosition;
    expect(refused.stderr).toMatch(
      new RegExp(`line ${i + 1}: \\w+'s chain is broken at global position ${gp}`),
    );

    // the last event of the last context gone with its closing line: truncated
    const truncatedFile = join(work, 'truncated.ndjson');
    writeFileSync(truncatedFile, `${lines.slice(0, -2).join('\n')}\n`);
    const cut = await runOperatorCli(target, 'import', truncatedFile);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/the file ends inside \w+ \(no closing line\): truncated/);

    const db = await Database.connect({ kind: 'postgres', url: target });
    try {
      for (const c of ALL_CONTEXTS) {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${CONTEXT_SCHEMAS[c.context]}.events`,
        );
        expect({ context: c.context, events: row!.n }).toEqual({ context: c.context, events: 0 });
      }
    } finally {
      await db.close();
    }
  }, 120_000);
});
