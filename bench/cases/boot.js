// Start time and memory, measured from outside as an operator sees them:
// - embedded (`node apps/platform/dist/main.js`): an empty data folder with the demo hosts (what `npm start`
//   does the first time; until /healthz answers, and until the demo is seeded), then a restart on that data,
//   left idle: its CPU time over the first 10 s (pollers still backing off) and, from 30 s after the start,
//   over 60 s in 5 s windows (the steady idle state: every poller at its longest delay, 30 s; see idleUsage),
//   with the RSS at the end (with --short: a few seconds, and no step-by-step starts); and the same start
//   step by step (bench/boot-phases.js) on an empty and an existing folder;
// - distributed (when DATABASE_URL is set): each app (`node apps/<app>/dist/main.js`) on a database of its
//   own run and a Kafka namespace of its own, until /healthz answers, and its RSS after 5 s idle.
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');
const { freshDatabase } = require('../lib');
const { ROOT, KEY, sleep, freePort, usage } = require('../platform-api');

const APPS = ['identity-2fa', 'marketplace-api', 'instance-lifecycle', 'sync-maintenance'];

/** Starts `main`, resolves once /healthz answers 200 (and the stdout line `waitFor`, if given). */
async function start(main, env, waitFor) {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [main], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let seenAt;
  child.stdout.on('data', (chunk) => {
    out += chunk;
    if (waitFor && seenAt === undefined && out.includes(waitFor)) seenAt = performance.now() - t0;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let healthMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench boot: ${main} exited (${child.exitCode})`);
    if (performance.now() - t0 > 120_000) throw new Error(`bench boot: ${main} not healthy in 120 s`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) {
      healthMs ??= performance.now() - t0;
      if (!waitFor || seenAt !== undefined) break;
    }
    await sleep(20);
  }
  return {
    healthMs,
    seenMs: seenAt,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function phases(dataDir) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'bench', 'boot-phases.js'), dataDir],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' } },
  );
  return JSON.parse(stdout.trim().split('\n').pop());
}

const breakdown = (p) =>
  p === undefined
    ? 'not run (--short)'
    : `modules ${p.modulesMs}, PGlite ${p.databaseMs}, migrations ${p.migrationsMs}, contexts (Nest) ${p.contextsMs}, listen ${p.listenMs} ms (CPU ${p.cpuMs} ms in all); RSS ${p.rssMb} MB`;

/**
 * CPU (% of a core) and RSS of an idle process: over its first `firstMs`, then from `settleMs` over `steadyMs`
 * in windows of `windowMs`: their mean, and their median (a one-off major GC of V8's memory reducer, a few
 * hundred ms of CPU, falls somewhere in the first minutes of an idle process and lifts one window only).
 */
async function idleUsage(pid, { firstMs, settleMs, steadyMs, windowMs }) {
  const t0 = performance.now();
  const a = usage(pid);
  await sleep(firstMs);
  const b = usage(pid);
  await sleep(Math.max(0, settleMs - (performance.now() - t0)));
  const pct = (from, to, ms) => (100 * (to.cpuS - from.cpuS)) / (ms / 1000);
  const c = usage(pid);
  const windows = [];
  let last = c;
  for (let n = 0; n < steadyMs / windowMs; n += 1) {
    await sleep(windowMs);
    const now = usage(pid);
    windows.push(pct(last, now, windowMs));
    last = now;
  }
  const sorted = [...windows].sort((x, y) => x - y);
  return {
    firstPct: pct(a, b, firstMs).toFixed(2),
    meanPct: pct(c, last, steadyMs).toFixed(2),
    medianPct: sorted[Math.floor(sorted.length / 2)].toFixed(2),
    maxPct: sorted[sorted.length - 1].toFixed(2),
    rssMb: last.rssMb,
  };
}

async function embedded(mode, idle, stepByStep) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rigmarket-boot-'));
  const env = {
    DATABASE_URL: '',
    KAFKA_BROKERS: '',
    RIGMARKET_DATA_DIR: path.join(root, 'data'),
    RIGMARKET_ADMIN_KEY: KEY,
  };
  const main = path.join(ROOT, 'apps/platform/dist/main.js');
  try {
    const first = await start(main, env, 'Demo: simulated hosts listed');
    await first.stop();
    const again = await start(main, env);
    const idleFigures = await idleUsage(again.pid, idle);
    await again.stop();
    const fresh = stepByStep ? await phases(path.join(root, 'phases')) : undefined;
    const existing = stepByStep ? await phases(path.join(root, 'phases')) : undefined;
    return [
      {
        case: 'embedded start on an empty data folder (npm start: demo hosts) to a served /healthz',
        mode,
        p50: first.healthMs,
        ceiling: `demo hosts seeded at ${Math.round(first.seenMs)} ms; step by step: ${breakdown(fresh)}`,
        goal: '<= 5,000 ms',
      },
      {
        case: 'embedded restart on existing data to a served /healthz',
        mode,
        p50: again.healthMs,
        ceiling: `RSS after ${(idle.settleMs + idle.steadyMs) / 1000} s idle ${idleFigures.rssMb.toFixed(0)} MB; step by step: ${breakdown(existing)}`,
        goal: '<= 5,000 ms; RSS <= 200 MB',
      },
      {
        case: `idle CPU of the restarted platform, steady: from ${idle.settleMs / 1000} s after its /healthz, over ${idle.steadyMs / 1000} s in ${idle.windowMs / 1000} s windows (pollers and timers)`,
        mode,
        ceiling: `median window ${idleFigures.medianPct}% of a core, mean ${idleFigures.meanPct}%, busiest window ${idleFigures.maxPct}% (its first ${idle.firstMs / 1000} s, pollers still backing off: ${idleFigures.firstPct}%); RSS ${idleFigures.rssMb.toFixed(0)} MB`,
        goal: '< 1% of a core',
      },
    ];
  } finally {
    // The secrets file (data.secrets.json) is beside the data folder, in root too.
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function distributed(mode, idleMs) {
  const { url, drop, db } = await freshDatabase(mode);
  await db.close();
  const started = [];
  const rows = [];
  try {
    const env = { DATABASE_URL: url, RIGMARKET_KAFKA_NAMESPACE: `bench-boot-${Date.now()}.` };
    for (const app of APPS) {
      const s = await start(path.join(ROOT, `apps/${app}/dist/main.js`), env);
      started.push({ app, ...s });
    }
    await sleep(idleMs);
    for (const s of started) {
      rows.push({
        case: `${s.app} start (node on a built tree, empty schema) to a served /healthz`,
        mode,
        p50: s.healthMs,
        ceiling: `RSS after ${idleMs / 1000} s idle (all four running) ${usage(s.pid).rssMb.toFixed(0)} MB`,
        goal: '<= 5,000 ms; RSS <= 200 MB',
      });
    }
    return rows;
  } finally {
    for (const s of started) await s.stop();
    await drop();
  }
}

module.exports = async function boot(mode, { short }) {
  const idle = short
    ? { firstMs: 500, settleMs: 1_000, steadyMs: 1_000, windowMs: 500 }
    : { firstMs: 10_000, settleMs: 30_000, steadyMs: 60_000, windowMs: 5_000 };
  return mode === 'embedded' ? embedded(mode, idle, !short) : distributed(mode, short ? 1_000 : 5_000);
};
