// What the platform cases share: the embedded platform started on a fresh folder (or the distributed one), a
// free port, /proc readings of a process and waits on them (until the servers are idle), and the public API
// calls that list a simulated 8-GPU host (register, ask, verify) as the admin and rent from it.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { listDemoHost } = require('../apps/platform/dist/demo-hosts');

const ROOT = path.join(__dirname, '..');
const KEY = 'bench-admin-key-0123456789abcdef';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** RSS (MB) and CPU seconds (user + system) of a process, from /proc. */
function usage(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = os.constants?.CLK_TCK ?? 100;
  return { rssMb: rss, cpuS: (Number(fields[11]) + Number(fields[12])) / ticks };
}

async function api(base, method, p, body) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  return { status: res.status, body: json };
}

async function until(what, attempt, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt().catch(() => undefined);
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`bench platform: ${what} timed out`);
    await sleep(100);
  }
}

/**
 * Starts the embedded platform as `npm start` runs it (node apps/platform/dist/main.js: PGlite on disk in a
 * fresh folder, no Kafka, the bench admin key, no demo hosts) on a free port, and waits until `readyPath`
 * answers 200. Options: `env` (more variables; they win), `logLevel`, `readyPath` ('/healthz' or '/readyz'),
 * `timeoutMs`, `prefix` (of the temporary folder). Returns its base URL, the child process, the ms from the
 * spawn to the first 200, and stop() (SIGTERM, SIGKILL after 15 s, then the folder removed).
 */
async function startEmbeddedPlatform({
  env = {},
  logLevel = 'warn',
  readyPath = '/healthz',
  timeoutMs = 120_000,
  prefix = 'rigmarket-bench-',
} = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'apps/platform/dist/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      KAFKA_BROKERS: '',
      RIGMARKET_DATA_DIR: path.join(dataDir, 'data'),
      RIGMARKET_ADMIN_KEY: KEY,
      RIGMARKET_DEMO_HOSTS: '0',
      PORT: String(port),
      LOG_LEVEL: logLevel,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await until(
      `the first ${readyPath}`,
      async () => (await fetch(`${base}${readyPath}`)).status === 200,
      timeoutMs,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { base, child, startMs: performance.now() - started, stop };
}

/** Lists the simulated 8-GPU host `bench-<n>` as the admin (demo-hosts.ts: register, ask, verify); its machine id. */
function listMachine(base, n) {
  return listDemoHost(base, KEY, {
    hostname: `bench-${n}`,
    gpu_name: 'RTX 4090',
    num_gpus: 8,
    gpu_ram: 24564,
    price_gpu: 0.4,
    geolocation: 'US',
    public_ipaddr: `198.51.100.${n + 20}`,
  });
}

/** Gives the admin (who rents in the benchmarks) $100,000 of credit, once its user answers. */
async function creditAdmin(base) {
  const me = await until('the admin user', async () => {
    const r = await api(base, 'GET', '/api/v0/users/current/');
    return r.status === 200 ? r.body : undefined;
  });
  await until(
    'credit',
    async () =>
      (await api(base, 'POST', '/api/v0/credit/', { user_id: me.id, amount: 100_000, note: 'bench' }))
        .status < 300,
  );
}

/**
 * The platform of a case: embedded (startEmbeddedPlatform) or distributed (bench/distributed-apps.js). Answers
 * its base URL, `cpuS()` (CPU seconds of every server process together), `metricsBases` (the processes'
 * /metrics), `pids` (by app; embedded: `platform`), `appBase(i)` (distributed: the i-th app's own port) and
 * `stop()`.
 */
async function startPlatform(mode, label) {
  if (mode === 'embedded') {
    const { base, child, stop } = await startEmbeddedPlatform({ prefix: `rigmarket-bench-${label}-` });
    return {
      base,
      metricsBases: [base],
      pids: { platform: child.pid },
      cpuS: () => usage(child.pid).cpuS,
      appBase: () => base,
      stop,
    };
  }
  // Required here: distributed-apps.js requires this module.
  const { startDistributed, DISTRIBUTED_APPS } = require('./distributed-apps');
  const p = await startDistributed(label);
  return { ...p, metricsBases: DISTRIBUTED_APPS.map((_, i) => p.appBase(i)) };
}

/**
 * Waits until the servers are back to their idle use (`cpuS` grows by under `idleCores` plus 10% of a core over
 * 500 ms; 0 idle cores: under 10% of a core), or `timeoutMs` passed: a rent answers before its events reached
 * the other contexts, which goes on in the background. Returns the seconds waited.
 */
async function untilIdle(cpuS, { idleCores = 0, timeoutMs = 120_000 } = {}) {
  const started = performance.now();
  for (;;) {
    const a = cpuS();
    await sleep(500);
    if ((cpuS() - a) / 0.5 < idleCores + 0.1 || performance.now() - started > timeoutMs)
      return (performance.now() - started) / 1000;
  }
}

/** The servers' CPU (cores) over `ms` while nobody calls them: their pollers and consumers. */
async function idleRate(cpuS, ms) {
  const c0 = cpuS();
  const t0 = performance.now();
  await sleep(ms);
  return (cpuS() - c0) / ((performance.now() - t0) / 1000);
}

/** Rents the first offer of a machine listed by listMachine (busybox, 10 GB) as the admin. */
function rentOffer(base, machineId) {
  return api(base, 'PUT', `/api/v0/asks/${machineId * 1000 + 1}/`, { image: 'busybox', disk: 10 });
}

/** Rents from a freshly listed machine, retried while instance-lifecycle does not have it yet (404). */
function firstRent(base, machineId) {
  return until('the first rent of a machine', async () => {
    const r = await rentOffer(base, machineId);
    return r.status < 300 && r.body.new_contract ? r : undefined;
  });
}

/**
 * Double allocations among rents ({machineId, id} each): a machine holding more than its 8 GPUs, or one
 * contract id answered twice.
 */
function doubleAllocations(created) {
  const perMachine = new Map();
  for (const c of created) perMachine.set(c.machineId, (perMachine.get(c.machineId) ?? 0) + 1);
  const distinct = new Set(created.map((c) => c.id)).size;
  return [...perMachine.values()].filter((n) => n > 8).length + (created.length - distinct);
}

/** Sum of rigmarket_db_statements_total / _transactions_total over the servers' /metrics. */
async function dbCounts(bases) {
  let statements = 0;
  let transactions = 0;
  for (const base of bases) {
    const text = await (await fetch(`${base}/metrics`)).text();
    statements += Number(/^rigmarket_db_statements_total (\S+)$/m.exec(text)?.[1] ?? NaN);
    transactions += Number(/^rigmarket_db_transactions_total (\S+)$/m.exec(text)?.[1] ?? NaN);
  }
  return { statements, transactions };
}

module.exports = {
  dbCounts,
  startPlatform,
  untilIdle,
  idleRate,
  rentOffer,
  firstRent,
  doubleAllocations,
  ROOT,
  KEY,
  sleep,
  freePort,
  usage,
  api,
  until,
  startEmbeddedPlatform,
  listMachine,
  creditAdmin,
};
