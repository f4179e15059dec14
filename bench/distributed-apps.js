// The distributed platform for the benchmark cases: the four apps as separate processes (`node
// apps/<app>/dist/main.js`) on a new PostgreSQL database and a Kafka namespace of their own, behind a small
// router in this process that sends each path to its app as the nginx edge does. Needs DATABASE_URL and
// KAFKA_BROKERS.
const { spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const { freshDatabase } = require('./lib');
const { ROOT, KEY, sleep, freePort, usage } = require('./platform-api');

/** The apps and the paths the bench sends each (the rest go to marketplace-api). */
const APPS = [
  { name: 'identity-2fa', routes: /^\/api\/v0\/(users\/current|auth)/ },
  { name: 'marketplace-api', routes: /^\/api\/v0\/(machines|credit|bundles|search)/ },
  { name: 'instance-lifecycle', routes: /^\/api\/v[01]\/(asks|instances)/ },
  { name: 'sync-maintenance', routes: /^\/api\/v0\/commands\/(rclone|copy_direct)/ },
];

/** Deletes the run's Kafka topics (the broker slows down as topics pile up). */
async function deleteTopics(namespace) {
  const { Kafka, logLevel } = require('kafkajs');
  const kafka = new Kafka({ brokers: process.env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(namespace));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}

async function stopChild(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts the apps (one after another, each until /readyz answers) and the router. Answers the router's base
 * URL, the database (a `Database` of @rigmarket/event-sourcing, for reading read models directly), each
 * app's process id, and `stop()`.
 */
async function startDistributed(label) {
  if (!process.env.DATABASE_URL || !process.env.KAFKA_BROKERS)
    throw new Error('the distributed platform needs DATABASE_URL and KAFKA_BROKERS');
  const { db, url, drop } = await freshDatabase('distributed');
  const namespace = `rmbench-${label}-${Date.now()}.`;
  const children = [];
  const ports = [];
  let router;
  const stop = async () => {
    if (router) await new Promise((resolve) => router.close(resolve));
    for (const child of children) await stopChild(child);
    await db.close().catch(() => undefined);
    await drop();
    await deleteTopics(namespace).catch((error) =>
      process.stderr.write(`bench: the run's Kafka topics (${namespace}*) not deleted: ${error.message}\n`),
    );
  };
  try {
    for (const app of APPS) {
      const port = await freePort();
      const child = spawn(process.execPath, [path.join(ROOT, `apps/${app.name}/dist/main.js`)], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: url,
          RIGMARKET_KAFKA_NAMESPACE: namespace,
          RIGMARKET_ADMIN_KEY: KEY,
          RIGMARKET_INSTANCE_SEAL_KEY: 'ab'.repeat(32),
          RIGMARKET_REGISTRY_KEY: 'cd'.repeat(32),
          HOST: '127.0.0.1',
          PORT: String(port),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      ports.push(port);
      const t0 = performance.now();
      for (;;) {
        if (child.exitCode !== null) throw new Error(`bench: ${app.name} exited (${child.exitCode})`);
        if (performance.now() - t0 > 120_000) throw new Error(`bench: ${app.name} not ready in 120 s`);
        const ok = await fetch(`http://127.0.0.1:${port}/readyz`)
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ok) break;
        await sleep(50);
      }
    }
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    router = http.createServer((req, res) => {
      const i = APPS.findIndex((a) => a.routes.test(req.url ?? ''));
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: ports[i === -1 ? 1 : i],
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent,
        },
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
    await new Promise((resolve) => router.listen(0, '127.0.0.1', resolve));
  } catch (error) {
    await stop();
    throw error;
  }
  const base = `http://127.0.0.1:${router.address().port}`;
  const pids = Object.fromEntries(APPS.map((a, i) => [a.name, children[i].pid]));
  /** CPU seconds of every app together. */
  const cpuS = () => children.reduce((sum, c) => sum + usage(c.pid).cpuS, 0);
  return { base, db, pids, cpuS, appBase: (i) => `http://127.0.0.1:${ports[i]}`, stop };
}

module.exports = { startDistributed, DISTRIBUTED_APPS: APPS.map((a) => a.name) };
