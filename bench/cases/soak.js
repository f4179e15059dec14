// The billing soak: many running instances on simulated hosts, billed every interval, while /healthz is
// sampled throughout. The embedded platform runs in this process (PGlite on disk, in-process transport, the
// relay settings of `npm start`) so that the billing meter can be timed run by run: its own timer is off and
// this case calls `runOnce` on the same schedule (what PeriodicJob does), noting a tick that finds the
// previous run still going ("behind"), and times each run until the hosts have earned every charge. With
// DATABASE_URL it runs again over a new PostgreSQL database (the same single process and in-process transport).
//
// Sizes: `npm run bench` bills 1,000 instances every 60 s for 3 minutes; `--soak-minutes N` runs N minutes,
// `--soak-full` the goal's 30 minutes, `--soak-instances N` fewer instances (a machine too loaded for 1,000);
// `--short` 16 instances every 2 s for 8 s (only to check that it works).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Database } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { BillingMeter } = require('@rigmarket/marketplace-api');
const { EMBEDDED_POLLING, createEmbeddedApp } = require('@rigmarket/platform');
const { freshDatabase, stats } = require('../lib');
const { KEY, sleep, freePort, usage, api, until, listMachine } = require('../platform-api');

const SAMPLE_EVERY_MS = 100;
const progress = (line) => process.stderr.write(`bench soak: ${line}\n`);
const GPUS_PER_MACHINE = 8;

function soakSize(short) {
  const args = process.argv.slice(2);
  const value = (flag) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : undefined);
  if (short) return { instances: 16, intervalMs: 2_000, durationMs: 8_000 };
  const minutes = args.includes('--soak-full') ? 30 : (value('--soak-minutes') ?? 3);
  const instances = value('--soak-instances') ?? 1000;
  if (!(minutes > 0 && minutes <= 30)) throw new Error('--soak-minutes takes 1 to 30');
  if (!(Number.isInteger(instances) && instances >= 8 && instances <= 1000))
    throw new Error('--soak-instances takes 8 to 1000');
  return { instances, intervalMs: 60_000, durationMs: minutes * 60_000 };
}

/** Rents `count` one-GPU instances over the machines, `concurrency` at a time on distinct machines. */
async function rentAll(base, machineIds, count, concurrency) {
  const queue = [];
  for (let round = 0; queue.length < count; round += 1)
    for (const id of machineIds) if (queue.length < count) queue.push(id);
  const created = [];
  const refusals = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let machineId = queue.shift(); machineId !== undefined; machineId = queue.shift()) {
        for (let attempt = 0; ; attempt += 1) {
          const r = await api(base, 'PUT', `/api/v0/asks/${machineId * 1000 + 1}/`, {
            image: 'busybox',
            disk: 10,
          });
          // The offer may not have reached instance-lifecycle yet, or another renter holds the session.
          if ((r.status === 404 || r.status === 409) && attempt < 100) {
            await sleep(100);
            continue;
          }
          if (r.status < 300 && r.body.new_contract) created.push(r.body.new_contract);
          else refusals.push(`${r.status} ${r.body.error ?? ''}`);
          break;
        }
      }
    }),
  );
  return { created, refusals };
}

/** GET /healthz every SAMPLE_EVERY_MS until stopped; latency counted from when the sample was due. */
function sampleHealth(base) {
  const samples = [];
  let stopped = false;
  const done = (async () => {
    let due = performance.now();
    while (!stopped) {
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const res = await fetch(`${base}/healthz`);
      await res.text();
      const at = performance.now();
      samples.push({ at, ms: at - due, ok: res.status === 200 });
      due += SAMPLE_EVERY_MS;
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

module.exports = async function soak(mode, { short }) {
  const label = mode === 'embedded' ? mode : 'PostgreSQL, one process';
  const size = soakSize(short);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rigmarket-soak-'));
  const previousQuota = process.env.RIGMARKET_QUOTA_INSTANCES;
  // One renter (the admin) holds every instance; the default quota (500) is per account.
  process.env.RIGMARKET_QUOTA_INSTANCES = String(size.instances + 100);
  // Distributed: the same single process over a new PostgreSQL database (the in-process transport: no Kafka).
  const fresh = mode === 'embedded' ? undefined : await freshDatabase(mode);
  const db = fresh ? fresh.db : await Database.connect({ kind: 'pglite', dataDir });
  const transport = new InProcessTransport();
  const app = await createEmbeddedApp({
    db,
    transport,
    identity: { adminKey: KEY },
    marketplace: { billingIntervalMs: 0 },
    ...EMBEDDED_POLLING,
  });
  const port = await freePort();
  await app.listen(port, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  try {
    const me = await until('the admin user', async () => {
      const r = await api(base, 'GET', '/api/v0/users/current/');
      return r.status === 200 ? r.body : undefined;
    });
    await api(base, 'POST', '/api/v0/credit/', { user_id: me.id, amount: 1_000_000, note: 'soak' });
    const setupStarted = performance.now();
    const machineIds = [];
    const machines = Math.ceil(size.instances / GPUS_PER_MACHINE);
    for (let n = 0; n < machines; n += 1) machineIds.push(await listMachine(base, n));
    progress(`${machines} hosts listed in ${((performance.now() - setupStarted) / 1000).toFixed(0)} s`);
    const rented = await rentAll(base, machineIds, size.instances, Math.min(16, machines));
    if (rented.created.length < size.instances)
      throw new Error(
        `soak: ${rented.created.length} of ${size.instances} instances created (${rented.refusals.slice(0, 3).join('; ')})`,
      );
    progress(
      `${rented.created.length} instances created at ${((performance.now() - setupStarted) / 1000).toFixed(0)} s`,
    );
    const meter = app.get(BillingMeter);
    const earningsPending = async () =>
      Number(
        (
          await db.query(
            `SELECT count(*) AS n FROM marketplace.reactor_queue WHERE reactor = 'host_earnings' AND done_at IS NULL`,
          )
        )[0].n,
      );
    const clock = () => new Date();
    // Running on the simulated hosts: every instance has an open compute period in marketplace.
    await until(
      'every instance running and billable',
      async () => {
        const due = await meter.due(clock());
        return new Set(due.filter((d) => d.kind === 'gpu').map((d) => d.instanceId)).size >= size.instances
          ? true
          : undefined;
      },
      300_000,
    );
    const setupS = (performance.now() - setupStarted) / 1000;
    progress(`all running and billable at ${setupS.toFixed(0)} s; billing for ${size.durationMs / 1000} s`);

    const runs = [];
    let behind = 0;
    let current;
    const tick = () => {
      if (current) {
        behind += 1;
        return;
      }
      const started = performance.now();
      current = meter.runOnce().then(
        async (charged) => {
          const ms = performance.now() - started;
          // The hosts' earnings follow each charge through the host_earnings reactor: timed until none is left.
          await until(
            'the hosts earned every charge',
            async () => ((await earningsPending()) === 0 ? true : undefined),
            size.intervalMs * 10,
          ).catch(() => undefined);
          const earnedMs = performance.now() - started;
          runs.push({ started, ms, earnedMs, charged: charged.length });
          progress(
            `billing run ${runs.length}: ${charged.length} charges in ${(ms / 1000).toFixed(1)} s, earned by ${(earnedMs / 1000).toFixed(1)} s`,
          );
          current = undefined;
        },
        (error) => {
          runs.push({ started, ms: performance.now() - started, charged: 0, error: String(error) });
          current = undefined;
        },
      );
    };
    const sampler = sampleHealth(base);
    const soakStarted = performance.now();
    const rssMb = [usage(process.pid).rssMb];
    tick();
    const timer = setInterval(tick, size.intervalMs);
    const rssTimer = setInterval(() => rssMb.push(usage(process.pid).rssMb), 5_000);
    await sleep(size.durationMs);
    clearInterval(timer);
    clearInterval(rssTimer);
    await current;
    await sampler.stop();
    const soakS = (performance.now() - soakStarted) / 1000;

    const latency = stats(sampler.samples.map((s) => s.ms));
    // p99 per billing interval: "throughout" is the worst of them.
    const windows = [];
    for (let from = soakStarted; from < soakStarted + soakS * 1000; from += size.intervalMs) {
      const inWindow = sampler.samples.filter((s) => s.at >= from && s.at < from + size.intervalMs);
      if (inWindow.length > 0) windows.push(stats(inWindow.map((s) => s.ms)).p99);
    }
    const failed = sampler.samples.filter((s) => !s.ok).length;
    const runStats = stats(runs.map((r) => r.ms));
    const maxRun = Math.max(...runs.map((r) => r.ms));
    const fewest = Math.min(...runs.map((r) => r.charged));
    const errors = runs.filter((r) => r.error).length;
    const late = runs.filter((r) => r.earnedMs > size.intervalMs).length;
    const maxEarned = Math.max(...runs.map((r) => r.earnedMs ?? 0));
    const what = `${size.instances.toLocaleString('en-US')} running instances billed every ${size.intervalMs / 1000} s for ${(size.durationMs / 60_000).toFixed(size.durationMs < 60_000 ? 2 : 0)} min`;
    return [
      {
        case: `soak: /healthz while ${what}`,
        mode: label,
        p50: latency.p50,
        p99: latency.p99,
        ceiling: `${latency.n} samples (every ${SAMPLE_EVERY_MS} ms, from when due), ${failed} failed; worst p99 of one interval ${Math.max(...windows).toFixed(1)} ms, max ${Math.max(...sampler.samples.map((s) => s.ms)).toFixed(0)} ms; RSS ${Math.min(...rssMb).toFixed(0)}-${Math.max(...rssMb).toFixed(0)} MB`,
        goal: 'p99 < 50 ms in every interval',
      },
      {
        case: `soak: billing runs while ${what}`,
        mode: label,
        p50: runStats.p50,
        p99: maxRun,
        perSec: runs.reduce((sum, r) => sum + r.charged, 0) / runs.reduce((sum, r) => sum + r.ms / 1000, 0),
        ceiling: `${runs.length} runs, at least ${fewest} charges each, ${errors} failed; ${behind} ticks found a run still going, ${late} runs not earned by the hosts within the interval, longest until earned ${(maxEarned / 1000).toFixed(1)} s (p99 column: the longest run); setup (list ${machines} hosts, rent, all running) ${setupS.toFixed(0)} s`,
        goal: 'every run done before the next is due',
      },
    ];
  } finally {
    await app.close();
    await transport.close();
    await db.close();
    await fresh?.drop();
    if (previousQuota === undefined) delete process.env.RIGMARKET_QUOTA_INSTANCES;
    else process.env.RIGMARKET_QUOTA_INSTANCES = previousQuota;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};
