import { type ChildProcess, spawn } from 'node:child_process';
import { type Server, createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Database, parkedEvents } from '@rigmarket/event-sourcing';
import { ledgerImbalances } from '@rigmarket/marketplace-api';
import { eventually } from '@rigmarket/testing';
import { seedDemoHosts } from '../demo-hosts';
import { ALL_CONTEXTS } from '../platform';
import { verify, verifyChains } from '../verify';
import { eventsInFlight, waitUntilSettled } from './settle';

/**
 * The crash workload (docs/reliability.md): renters renting, stopping, starting and destroying in a loop
 * while a fault is injected at a random point (kill -9 of a process, a broker or database restart), again
 * and again; then the checks: every instance converges to a state consistent with its host (or ends
 * exited/offline with a reason) within a bounded time, no acknowledged write is lost, no event is doubled,
 * no compute is charged for an instance that never ran, the ledger balances and every read model equals
 * its rebuild (rigmarket verify). Used by crash-recovery.e2e-spec (kill -9) and infra-faults.e2e-spec.
 */
const ROOT = join(__dirname, '..', '..', '..', '..');
export const ADMIN_KEY = 'crash-recovery-admin-key-0123456789';
export const KILLS = 3;
const WORKERS = 4;
const CONVERGE_MS = 60_000;
const DEAD = ['exited', 'offline', 'unknown'];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** What the test was told: a write counts once its 2xx answer came back. */
interface Op {
  instanceId: number;
  kind: 'create' | 'stopped' | 'running' | 'destroy';
  acked: boolean;
}

export interface Row {
  id: number;
  actual_status: string | null;
  intended_status: string;
  status_msg: string | null;
}

export type Answer = { status: number; body: Record<string, unknown> };

/** The platform under test: where requests go, what a kill -9 does, where the events are read. */
export interface Target {
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  /** kill -9 (one process; which one may depend on the round), then start it again. */
  kill9(round: number): Promise<void>;
  restart(): Promise<void>;
  /** Graceful stop, then a connection to its event store. */
  stopAndOpenStore(): Promise<Database>;
}

/** Destroys every instance still there, so that billing stops charging before the processes stop. */
export async function destroyInstancesLeft(call: (method: string, path: string) => Promise<Answer>) {
  const left = (await call('GET', '/instances/?limit=1000')).body.instances as Row[];
  for (const row of left) await call('DELETE', `/instances/${row.id}/`);
}

export async function callAt(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { error: text.slice(0, 80) };
  }
  return { status: res.status, body: parsed };
}

export interface Spawned {
  child: ChildProcess;
  exited: Promise<unknown>;
}

export function spawnNode(script: string, env: NodeJS.ProcessEnv, log: (text: string) => void): Spawned {
  const child = spawn(process.execPath, [join(ROOT, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log(d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, exited };
}

export async function kill(proc: Spawned | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  await proc.exited;
}

/**
 * The workload and the checks, for any target: `faults` rounds of renters working until a random moment
 * after a few acknowledged writes, kill -9, restart; then convergence, lost writes, doubled events, compute
 * without running.
 */
/** What the renters were answered, by HTTP status. */
export type Answers = Map<number, number>;

export async function crashRun(target: Target, label: string, faults = KILLS): Promise<Answers> {
  const ops: Op[] = [];
  let unacked = 0;
  const live: number[] = [];
  const answers = new Map<number, number>();
  const refusals = new Set<string>();
  const call = (method: string, path: string, body?: unknown) => target.call(method, path, body);

  async function renter(offers: number[], running: () => boolean): Promise<void> {
    const write = async (op: Omit<Op, 'acked'>, send: () => Promise<{ status: number }>) => {
      const entry: Op = { ...op, acked: false };
      ops.push(entry);
      try {
        const { status } = await send();
        answers.set(status, (answers.get(status) ?? 0) + 1);
        entry.acked = status >= 200 && status < 300;
        if (status === 502) unacked += 1; // distributed: the app behind the router was down
        return status;
      } catch {
        unacked += 1; // in flight at the kill: either outcome is fine
        return 0;
      }
    };
    while (running()) {
      if (live.length < 6) {
        const offer = offers[Math.floor(Math.random() * offers.length)]!;
        try {
          const res = await call('PUT', `/asks/${offer}/`, {
            image: 'busybox',
            runtype: 'ssh_direct',
            disk: 8,
          });
          answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
          if (res.status !== 200) refusals.add(String(res.body.error));
          if (res.status === 200) {
            const id = res.body.new_contract as number;
            ops.push({ instanceId: id, kind: 'create', acked: true });
            live.push(id);
          }
        } catch {
          unacked += 1; // a rent in flight at the kill may or may not exist: the convergence check sees it
        }
      }
      const id = live.splice(Math.floor(Math.random() * live.length), 1)[0];
      if (id !== undefined && running()) {
        if (Math.random() < 0.5) {
          const state = Math.random() < 0.5 ? 'stopped' : 'running';
          await write({ instanceId: id, kind: state }, () => call('PUT', `/instances/${id}/`, { state }));
          live.push(id);
        } else {
          const status = await write({ instanceId: id, kind: 'destroy' }, () =>
            call('DELETE', `/instances/${id}/`),
          );
          if (status !== 200) live.push(id);
        }
      } else if (id !== undefined) live.push(id);
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
    }
  }

  const started = Date.now();
  const offers = await eventually(
    async () => {
      const found = (await call('POST', '/bundles/', {})).body.offers as Array<{ id: number }> | undefined;
      return found && found.length >= 3 ? found : undefined;
    },
    60_000,
    'the demo offers',
  );
  await eventually(
    async () => (Number((await call('GET', '/users/current/')).body.credit) > 0 ? true : undefined),
    60_000,
    'the demo credit',
  );
  const machines = [...new Set(offers.map((o) => Math.floor(o.id / 1000)))];
  const oneGpu = machines.map((m) => m * 1000 + 1);

  for (let round = 0; round < faults; round += 1) {
    let going = true;
    const load = Array.from({ length: WORKERS }, () => renter(oneGpu, () => going));
    // A few writes acknowledged in this life of the process, then a random moment.
    const before = ops.filter((o) => o.acked).length;
    await eventually(
      async () => (ops.filter((o) => o.acked).length >= before + 4 ? true : undefined),
      45_000,
      `writes acknowledged before kill ${round + 1} (answers so far ${JSON.stringify(Object.fromEntries(answers))})`,
    );
    await new Promise((r) => setTimeout(r, Math.random() * 2_000));
    await target.kill9(round); // at a random point of the workload
    going = false;
    await Promise.all(load);
    await target.restart();
  }

  // Every instance converges to its intent (or ends exited/offline with a reason).
  const restartedAt = Date.now();
  let pendingNow: Row[] = [];
  const settled = await eventually(
    async () => {
      const res = await call('GET', '/instances/?limit=1000');
      if (res.status !== 200) return undefined;
      const rows = (res.body.instances ?? []) as Row[];
      const pending = rows.filter(
        (r) =>
          !(DEAD.includes(r.actual_status ?? '') && r.status_msg) && r.actual_status !== r.intended_status,
      );
      pendingNow = pending;
      return pending.length === 0 ? rows : undefined;
    },
    CONVERGE_MS,
    'every instance consistent with its host',
  ).catch((error: Error) =>
    Promise.reject(new Error(`${error.message}; still pending: ${JSON.stringify(pendingNow)}`)),
  );
  const convergeMs = Date.now() - restartedAt;

  // No acknowledged write lost: the last acknowledged write of each instance holds, unless a write after
  // it was in flight at a kill (then either outcome is fine).
  const byId = new Map(settled.map((r) => [r.id, r]));
  const lostWrites: string[] = [];
  const ids = [...new Set(ops.map((o) => o.instanceId))];
  for (const id of ids) {
    const mine = ops.filter((o) => o.instanceId === id);
    const lastAcked = [...mine].reverse().find((o) => o.acked);
    const after = mine.slice(mine.lastIndexOf(lastAcked!) + 1);
    if (!lastAcked || after.length > 0) continue;
    const row = byId.get(id);
    const seen = `${lastAcked.kind} of ${id}: now ${JSON.stringify(row ?? null)}; ops ${JSON.stringify(mine)}`;
    if (lastAcked.kind === 'destroy' ? row !== undefined : row === undefined) lostWrites.push(seen);
    else if (
      (lastAcked.kind === 'stopped' || lastAcked.kind === 'running') &&
      row?.intended_status !== lastAcked.kind
    )
      lostWrites.push(seen);
  }
  const acked = ops.filter((o) => o.acked).length;

  const db = await target.stopAndOpenStore();
  try {
    const doubled = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM (
         SELECT stream_id, type FROM instance_lifecycle.events
          WHERE type IN ('InstanceCreated', 'InstanceDestroyed') GROUP BY stream_id, type HAVING count(*) > 1
         UNION ALL
         SELECT stream_id, data->>'periodStart' FROM marketplace.events
          WHERE type = 'AccountCharged' GROUP BY stream_id, data->>'instanceId', data->>'kind', data->>'periodStart' HAVING count(*) > 1
       ) d`,
    );
    const computeNeverRan = await db.query<{ instance_id: string; micros: string }>(
      `SELECT data->>'instanceId' AS instance_id, sum((data->>'amountMicros')::bigint)::text AS micros
         FROM marketplace.events c
        WHERE c.type = 'AccountCharged' AND c.data->>'kind' = 'gpu'
          AND NOT EXISTS (SELECT 1 FROM instance_lifecycle.events s
                           WHERE s.stream_id = 'instance-' || (c.data->>'instanceId')
                             AND s.type = 'InstanceStateChanged' AND s.data->>'actualStatus' = 'running')
        GROUP BY 1`,
    );
    const events = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM instance_lifecycle.events`);
    // The ledger balances across the kills: granted - charged + earned = every account's balance.
    const imbalances = await db.transaction((sql) => ledgerImbalances(sql));
    // Every read model against its rebuild from the events, and the ledger balance (rigmarket verify).
    const verifyLines: string[] = [];
    const verified = await verify(db, ALL_CONTEXTS, (line) => verifyLines.push(line));
    // Every context's event hash chain links after the kills (rigmarket verify --chain).
    const chainLines: string[] = [];
    const chains = await verifyChains(db, ALL_CONTEXTS, (line) => chainLines.push(line));
    process.stdout.write(
      `crash-recovery (${label}): ${faults} faults, ${ids.length} instances, ${acked} acknowledged writes (${unacked} in flight at a kill), ` +
        `${lostWrites.length} lost, ${doubled[0]!.n} doubled, ${computeNeverRan.length} instances charged compute without running, ` +
        `verify ${verified.ok ? 'ok' : 'DIFFERENCES'}, ledger imbalances ${imbalances.length}, ` +
        `converged in ${convergeMs} ms, ${events[0]!.n} instance events, ${Math.round((Date.now() - started) / 1000)} s in all; ` +
        `answers ${JSON.stringify(Object.fromEntries(answers))}, rents refused: ${[...refusals].join(', ')}\n`,
    );
    expect(acked).toBeGreaterThan(faults * 4);
    expect(lostWrites).toEqual([]);
    expect(Number(doubled[0]!.n)).toBe(0);
    expect(computeNeverRan).toEqual([]);
    if (!verified.ok)
      // With what was parked and where each subscribed read model stands, to tell a lost delivery from a
      // refused one.
      process.stdout.write(
        `crash-recovery (${label}) verify: ${verifyLines.filter((l) => !l.endsWith(': equal')).join('\n')}\n` +
          `parked: ${JSON.stringify(await parkedEvents(db))}\nin flight: ${JSON.stringify(await eventsInFlight(db))}\n`,
      );
    expect(imbalances).toEqual([]);
    expect({ chains: chains.ok, broken: chainLines.filter((l) => l.includes('BROKEN')) }).toEqual({
      chains: true,
      broken: [],
    });
    // Every read model equals its rebuild from the events after the kills (rigmarket verify).
    expect({ differences: verified.differences, failures: verified.failures }).toEqual({
      differences: [],
      failures: [],
    });
    return answers;
  } finally {
    await db.close();
  }
}

/** The apps of the distributed platform and the paths the workload sends each (the edge's routing). */
const APPS = [
  { name: 'identity-2fa', routes: /^\/api\/v0\/users\/current/ },
  { name: 'marketplace-api', routes: /^\/api\/v0\/(users\/me|bundles|machines|credit|charges)/ },
  { name: 'instance-lifecycle', routes: /^\/api\/v[01]\/(asks|instances)/ },
  { name: 'sync-maintenance', routes: /^\/api\/v0\/(commands\/(rclone|copy_direct)|machines\/maintenances)/ },
] as const;
export const DISTRIBUTED_APPS = APPS.map((a) => a.name);

/**
 * The four apps as separate processes (`node apps/<app>/dist/main.js`) on one PostgreSQL database and a
 * Kafka namespace of their own, behind a small router that routes paths as the nginx edge does (502 while
 * an app is down).
 */
export class DistributedPlatform {
  output = '';
  private readonly ports: number[] = [];
  private readonly procs: Array<Spawned | undefined> = [];
  private router: Server | undefined;
  private routerPort = 0;

  constructor(
    readonly databaseUrl: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  base(): string {
    return `http://127.0.0.1:${this.routerPort}`;
  }

  call(method: string, path: string, body?: unknown): Promise<Answer> {
    return callAt(this.base(), method, path, body);
  }

  async startApp(i: number): Promise<void> {
    this.procs[i] = spawnNode(
      `apps/${APPS[i]!.name}/dist/main.js`,
      {
        RIGMARKET_ADMIN_KEY: ADMIN_KEY,
        RIGMARKET_INSTANCE_SEAL_KEY: 'ab'.repeat(32),
        RIGMARKET_BILLING_INTERVAL_MS: '1000',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        DATABASE_URL: this.databaseUrl,
        ...this.env,
        PORT: String(this.ports[i]),
      },
      (text) => (this.output += text),
    );
    await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${this.ports[i]}/readyz`).catch(() => null);
        return res?.status === 200 ? true : undefined;
      },
      90_000,
      `${APPS[i]!.name} ready`,
    ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${this.output.slice(-3_000)}`)));
  }

  async kill(i: number, signal: NodeJS.Signals): Promise<void> {
    await kill(this.procs[i], signal);
  }

  /** Starts the router and the apps, and lists the demo hosts. */
  async start(): Promise<void> {
    for (const _ of APPS) this.ports.push(await freePort());
    this.router = createHttpServer((req, res) => {
      const app = APPS.findIndex((a) => a.routes.test(req.url ?? ''));
      const target = this.ports[app === -1 ? 1 : app]!;
      const upstream = httpRequest(
        { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'application/json' });
        res.end('{"success":false,"error":"upstream_unavailable","msg":"the app is down"}');
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.router!.listen(0, '127.0.0.1', resolve));
    this.routerPort = (this.router.address() as { port: number }).port;
    for (const [i] of APPS.entries()) await this.startApp(i);
    await seedDemoHosts(this.base(), ADMIN_KEY);
  }

  /**
   * Settles, then stops every app gracefully. Billing runs every second, and an app stopped while another
   * still publishes would leave its read models behind the events (lag, not drift): so the instances left
   * are destroyed and the apps keep running until nothing is in flight between them.
   */
  async settleAndStop(): Promise<Database> {
    await destroyInstancesLeft((method, path) => this.call(method, path));
    const db = await Database.connect({ kind: 'postgres', url: this.databaseUrl });
    try {
      await waitUntilSettled(db).catch((error: Error) =>
        Promise.reject(new Error(`${error.message}\napps' output:\n${this.output.slice(-4_000)}`)),
      );
    } finally {
      await db.close();
    }
    for (const proc of this.procs) await kill(proc, 'SIGTERM');
    return Database.connect({ kind: 'postgres', url: this.databaseUrl });
  }

  async close(): Promise<void> {
    for (const proc of this.procs) await kill(proc, 'SIGKILL');
    await new Promise((resolve) => this.router?.close(resolve));
  }
}
