// The renter's poll: GET /api/v0/instances/ (`vastai show instances`) with 100 instances, 8 concurrent, against
// /healthz of the same server in the same run, alternated (five rounds each, the median round reported:
// the machine is shared), with the server's CPU per request (/proc). Also a conditional poll (If-None-Match:
// the answer's ETag, 304). Embedded: `node apps/platform/dist/main.js` (PGlite); distributed: the four apps on
// PostgreSQL and Kafka (bench/distributed-apps.js), polled at instance-lifecycle's own port (no router in
// between) and compared with that process's /healthz.
const os = require('node:os');
const { stats, timeEach, throughput } = require('../lib');
const {
  KEY,
  usage,
  api,
  until,
  startPlatform,
  untilIdle,
  idleRate,
  firstRent,
  listMachine,
  creditAdmin,
} = require('../platform-api');
const { DISTRIBUTED_APPS } = require('../distributed-apps');

/**
 * Throughput of `fn` (8 concurrent) and the server's CPU ms per call over the same time, less its idle rate
 * (which would otherwise be spread over the calls, more over the slower case's).
 */
async function measure(fn, cpuS, durationMs, idle) {
  const c0 = cpuS();
  const t0 = performance.now();
  const rate = await throughput(fn, { concurrency: 8, durationMs });
  const busy = cpuS() - c0 - (idle * (performance.now() - t0)) / 1000;
  return { ...rate, cpuMs: (1000 * busy) / Math.max(1, rate.n) };
}

module.exports = async function poll(mode, { short }) {
  const started = await startPlatform(mode, 'poll');
  // Distributed: instance-lifecycle's own port and CPU (the other apps do not serve the poll).
  const i = DISTRIBUTED_APPS.indexOf('instance-lifecycle');
  const platform =
    mode === 'embedded'
      ? { ...started, server: started.base }
      : {
          ...started,
          server: started.appBase(i),
          cpuS: () => usage(started.pids['instance-lifecycle']).cpuS,
        };
  const { base, server } = platform;
  try {
    await creditAdmin(base);
    const target = short ? 4 : 100;
    const machineIds = [];
    for (let n = 0; n < Math.ceil(target / 8); n += 1) machineIds.push(await listMachine(base, n));
    let created = 0;
    for (const machineId of machineIds) {
      for (let gpu = 0; gpu < 8 && created < target; gpu += 1) {
        // The first rent after a machine is listed may be 404 until instance-lifecycle has it.
        await firstRent(base, machineId);
        created += 1;
      }
    }
    // Until every instance is running (the simulated hosts' reports change the answer until then).
    const listed = await until(
      'every instance listed and running',
      async () => {
        const r = await api(server, 'GET', '/api/v0/instances/');
        const rows = r.body.instances ?? [];
        return rows.length === target && rows.every((row) => row.actual_status === 'running')
          ? rows.length
          : undefined;
      },
      180_000,
    );
    await untilIdle(platform.cpuS);
    const auth = { Authorization: `Bearer ${KEY}` };
    const first = await fetch(`${server}/api/v0/instances/`, { headers: auth });
    let etag = first.headers.get('etag');
    const size = (await first.arrayBuffer()).byteLength;
    // Timed polls read the whole answer as /healthz's do, without parsing it: the ratio compares the
    // server's work, not the bench client's JSON.parse of ~100 KB (which shares the machine's cores).
    const pollOnce = async () => {
      const r = await fetch(`${server}/api/v0/instances/`, { headers: auth });
      const text = await r.text();
      if (r.status !== 200 || !text.startsWith('{"success":true'))
        throw new Error(`GET /instances/: ${r.status}`);
    };
    const conditional = async () => {
      // Cache-Control given: fetch would otherwise add `no-cache` to a conditional request (no 304 then).
      const r = await fetch(`${server}/api/v0/instances/`, {
        headers: { ...auth, 'If-None-Match': etag, 'Cache-Control': 'max-age=0' },
      });
      await r.arrayBuffer();
      // A 200: the answer changed meanwhile (a host report); its new ETag is asked with from then on.
      if (r.status === 200) etag = r.headers.get('etag');
      else if (r.status !== 304) throw new Error(`GET /instances/ with If-None-Match: ${r.status}`);
    };
    const health = () => fetch(`${server}/healthz`).then((r) => r.text());
    const one = stats(await timeEach(short ? 5 : 100, pollOnce));
    const durationMs = short ? 300 : 3000;
    const rounds = short ? 1 : 5;
    const load0 = os.loadavg()[0];
    const runs = { health: [], poll: [], conditional: [] };
    const idleCores = await idleRate(platform.cpuS, short ? 300 : 3000);
    for (let round = 0; round < rounds; round += 1) {
      runs.health.push(await measure(health, platform.cpuS, durationMs, idleCores));
      runs.poll.push(await measure(pollOnce, platform.cpuS, durationMs, idleCores));
      runs.conditional.push(await measure(conditional, platform.cpuS, durationMs, idleCores));
    }
    const load1 = os.loadavg()[0];
    // Each round's ratio to the /healthz measured just before it; the median round reported.
    const ratios = runs.poll.map((p, i) => p.perSec / runs.health[i].perSec);
    const median = ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]);
    const h = runs.health[median];
    const p = runs.poll[median];
    const c = runs.conditional[median];
    const range = (list) => `${Math.min(...list).toFixed(2)}-${Math.max(...list).toFixed(2)}`;
    const mid = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
    const cpuPoll = mid(runs.poll.map((r) => r.cpuMs));
    const cpuHealth = mid(runs.health.map((r) => r.cpuMs));
    return [
      {
        case: `poll GET /instances/ with ${listed} instances (${Math.round(size / 1024)} KB), 8 concurrent`,
        mode,
        p50: one.p50,
        p99: one.p99,
        perSec: p.perSec,
        ceiling:
          `/healthz ${Math.round(h.perSec)}/s (8 concurrent, same server); ratio in ${rounds} alternated rounds ${range(ratios)}; ` +
          `server CPU per request (median round, its idle ${(100 * idleCores).toFixed(0)}% of a core subtracted): poll ${cpuPoll.toFixed(2)} ms, /healthz ${cpuHealth.toFixed(2)} ms (${(cpuHealth / cpuPoll).toFixed(2)}); ` +
          `load ${load0.toFixed(1)} -> ${load1.toFixed(1)}`,
        ratio: p.perSec / h.perSec,
        goal: '>= 0.6',
      },
      {
        case: 'poll with If-None-Match (304), 8 concurrent',
        mode,
        p50: c.p50,
        p99: c.p99,
        perSec: c.perSec,
        ceiling: `/healthz ${Math.round(h.perSec)}/s; server CPU per request (median round) ${mid(runs.conditional.map((r) => r.cpuMs)).toFixed(2)} ms`,
        ratio: c.perSec / h.perSec,
      },
    ];
  } finally {
    await platform.stop();
  }
};
