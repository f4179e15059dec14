// How fast do live streams (GET /api/v0/instances/events/, Server-Sent Events) carry an instance change, and
// what do many open streams cost? The embedded platform (node apps/platform/dist/main.js on a fresh folder)
// with N streams of one account open (N = 1, 50, 200 by default), while the account rents 2 instances and
// stops and starts them: for every `instance` event each stream receives, the delay from the event's time
// (the command's clock) to its arrival; and /healthz p50 meanwhile. Each stream wakes on every commit of the
// process and reads the new events once, so the cost grows with streams x commits.
// Run: npm run build && node bench/live-streams.js [N,N,...]
require('./no-rate-limits');
const http = require('node:http');
const os = require('node:os');
const { KEY, sleep, api, until, startEmbeddedPlatform, listMachine } = require('./platform-api');

const COUNTS = (process.argv[2] ?? '1,50,200').split(',').map(Number);
const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

/** Opens a stream; every `instance` event's delay (ms) goes to `delays`. */
function openStream(base, delays) {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}/api/v0/instances/events/`,
      { headers: { Authorization: `Bearer ${KEY}`, Accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!/^event: instance$/m.test(block)) continue;
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (data) delays.push(Date.now() - Date.parse(JSON.parse(data).at));
          }
        });
        resolve(() => req.destroy());
      },
    );
    req.on('error', reject);
  });
}

async function phase(base, machineId, streams) {
  const delays = [];
  const closers = [];
  for (let i = 0; i < streams; i += 1) closers.push(await openStream(base, delays));
  const health = [];
  let stop = false;
  const prober = (async () => {
    while (!stop) {
      const t = performance.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      health.push(performance.now() - t);
      await sleep(50);
    }
  })();
  const status = async (id) =>
    (await api(base, 'GET', `/api/v0/instances/${id}/`)).body.instances?.actual_status ?? null;
  const ids = [];
  for (let i = 0; i < 2; i += 1) {
    const rented = await until('a rent', async () => {
      const r = await api(base, 'PUT', `/api/v0/asks/${machineId * 1000 + 1}/`, {
        image: 'busybox',
        disk: 8,
      });
      return r.status === 200 ? r.body.new_contract : undefined;
    });
    ids.push(rented);
  }
  for (const id of ids) await until(`${id} running`, async () => (await status(id)) === 'running', 60_000);
  for (const id of ids) {
    await api(base, 'PUT', `/api/v0/instances/${id}/`, { state: 'stopped' });
    await until(`${id} stopped`, async () => (await status(id)) === 'stopped', 60_000);
    await api(base, 'PUT', `/api/v0/instances/${id}/`, { state: 'running' });
    await until(`${id} running again`, async () => (await status(id)) === 'running', 60_000);
  }
  for (const id of ids) await api(base, 'DELETE', `/api/v0/instances/${id}/`, {});
  await sleep(1_000);
  stop = true;
  await prober;
  for (const close of closers) close();
  await sleep(500);
  return { delays, health };
}

(async () => {
  const { base, stop } = await startEmbeddedPlatform({
    env: { RIGMARKET_SSE_MAX_PER_USER: '1000', RIGMARKET_SSE_MAX: '1000' },
    logLevel: 'silent',
    readyPath: '/readyz',
    prefix: 'rigmarket-sse-bench-',
  });
  try {
    const me = (await api(base, 'GET', '/api/v0/users/current/')).body.id;
    await api(base, 'POST', '/api/v0/credit/', { user_id: me, amount: 1000, note: 'bench' });
    const machineId = await listMachine(base, 1);
    console.log(`embedded platform, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`);
    for (const streams of COUNTS) {
      const { delays, health } = await phase(base, machineId, streams);
      console.log(
        `${String(streams).padStart(4)} stream(s): ${String(delays.length).padStart(5)} events received, delay p50 ${pct(delays, 0.5)} ms, p99 ${pct(delays, 0.99)} ms, max ${Math.max(...delays)} ms; /healthz p50 ${pct(health, 0.5).toFixed(1)} ms`,
      );
    }
  } finally {
    await stop();
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
