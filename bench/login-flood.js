// Does a flood of failed password logins slow other users? The embedded platform (node
// apps/platform/dist/main.js on a fresh folder) under 16 concurrent wrong-password logins (distinct names,
// so the per-account lockout does not stop them), measuring /healthz and GET /api/v0/users/current/ p50
// from a 17th client: idle, then flooded with password hashing unbounded (RIGMARKET_PASSWORD_HASH_CONCURRENCY
// raised to 1000: as before the bound), then flooded with the default bound (2 at once, 32 queued, the
// rest shed with 503 busy).
// Run: npm run build && node bench/login-flood.js [seconds per phase, default 5]
require('./no-rate-limits');
const os = require('node:os');
const { KEY, sleep, startEmbeddedPlatform } = require('./platform-api');

const SECONDS = Number(process.argv[2] ?? 5);
const FLOOD = 16;

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function phase(base, flood) {
  let stop = false;
  const statuses = {};
  const flooders = flood
    ? Array.from({ length: FLOOD }, async (_, i) => {
        for (let n = 0; !stop; n += 1) {
          const r = await fetch(`${base}/api/v0/users/login/`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ username: `flood-${i}-${n}@example.com`, password: 'wrong password' }),
          });
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          await r.arrayBuffer();
        }
      })
    : [];
  const health = [];
  const current = [];
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) {
    let t = performance.now();
    await (await fetch(`${base}/healthz`)).arrayBuffer();
    health.push(performance.now() - t);
    t = performance.now();
    await (
      await fetch(`${base}/api/v0/users/current/`, { headers: { Authorization: `Bearer ${KEY}` } })
    ).arrayBuffer();
    current.push(performance.now() - t);
    await sleep(20);
  }
  stop = true;
  await Promise.all(flooders);
  return { healthP50: p50(health), currentP50: p50(current), logins: statuses };
}

async function run(label, env, flood) {
  const { base, stop } = await startEmbeddedPlatform({
    env,
    logLevel: 'silent',
    readyPath: '/readyz',
    timeoutMs: 60_000,
    prefix: 'rigmarket-flood-',
  });
  try {
    await sleep(500);
    const result = await phase(base, flood);
    console.log(
      `${label.padEnd(52)} /healthz p50 ${result.healthP50.toFixed(1).padStart(7)} ms   users/current p50 ${result.currentP50.toFixed(1).padStart(7)} ms   logins by status ${JSON.stringify(result.logins)}`,
    );
  } finally {
    await stop();
  }
}

(async () => {
  console.log(
    `embedded platform, ${FLOOD} concurrent wrong-password logins, ${SECONDS} s per phase, ${os.cpus().length} cores`,
  );
  await run('idle (no flood)', {}, false);
  await run(
    'flood, hashing unbounded (as before)',
    { RIGMARKET_PASSWORD_HASH_CONCURRENCY: '1000', RIGMARKET_PASSWORD_HASH_QUEUE: '1000' },
    true,
  );
  await run('flood, hashing bounded (default: 2 at once, 32 queued)', {}, true);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
