// Shared helpers of the benchmark suite (bench/run.js). Plain Node.js over the built packages (dist/).
require('reflect-metadata');
const os = require('node:os');
const { Client } = require('pg');
const { Database } = require('@rigmarket/event-sourcing');

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/** p50/p99/mean of durations in ms. */
function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sum / Math.max(1, sorted.length),
  };
}

/** Calls `fn(i)` and adds its duration in ms to `times`. */
async function timeCall(fn, i, times) {
  const start = performance.now();
  await fn(i);
  times.push(performance.now() - start);
}

/** Runs `fn` n times in sequence; its durations in ms. */
async function timeEach(n, fn) {
  const times = [];
  for (let i = 0; i < n; i += 1) await timeCall(fn, i, times);
  return times;
}

/**
 * `a(i)` and `b(i)` called in turns, n times each, each call timed: both sides run under the same conditions
 * (the engine compiling PGlite's WebAssembly in the background over the first seconds, the machine's load),
 * which timing all of one side before the other would give to the side that ran first.
 */
async function timeAlternately(n, a, b) {
  const timesA = [];
  const timesB = [];
  for (let i = 0; i < n; i += 1) {
    if (i % 2 === 0) {
      await timeCall(a, i, timesA);
      await timeCall(b, i, timesB);
    } else {
      await timeCall(b, i, timesB);
      await timeCall(a, i, timesA);
    }
  }
  return [timesA, timesB];
}

/** `concurrency` loops calling `fn` until `durationMs` passed: completed calls per second and their durations. */
async function throughput(fn, { concurrency = 8, durationMs = 2000 } = {}) {
  const times = [];
  const end = performance.now() + durationMs;
  const start = performance.now();
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await fn(i++);
        times.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { perSec: times.length / elapsed, concurrency, ...stats(times) };
}

/**
 * A results row of a rate held against /healthz's: `measured` has perSec, p50 and p99 (throughput()'s answer,
 * or the same worked out by the case), `healthz` is throughput() of /healthz; the ratio is the one rate over
 * the other. `more` goes after the ceiling (counts, what else the case saw).
 */
function throughputRow({ case: name, mode, goal = '' }, measured, healthz, more = '') {
  return {
    case: name,
    mode,
    p50: measured.p50,
    p99: measured.p99,
    perSec: measured.perSec,
    ceiling: `/healthz ${Math.round(healthz.perSec)}/s (${healthz.concurrency} concurrent)${more ? `; ${more}` : ''}`,
    ratio: measured.perSec / healthz.perSec,
    goal,
  };
}

/** A database of its own: PGlite in memory (embedded) or a new PostgreSQL database (distributed). */
async function freshDatabase(mode) {
  if (mode === 'embedded') {
    const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    return { db, url: null, drop: async () => undefined };
  }
  const name = `rmbench_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const db = await Database.connect({ kind: 'postgres', url: url.toString() });
  return {
    db,
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: `${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    load: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / '),
  };
}

async function getJson(url, init) {
  const res = await fetch(url, init);
  const body = await res.json();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const ms = (v) =>
  v === undefined || v === null ? '' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
const num = (v) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}` : '');

module.exports = {
  stats,
  timeEach,
  timeAlternately,
  throughput,
  throughputRow,
  freshDatabase,
  machine,
  getJson,
  ms,
  num,
  ratio,
};
