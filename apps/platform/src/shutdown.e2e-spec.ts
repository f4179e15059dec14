import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { openSse } from './testing/sse-client';

/**
 * SIGTERM under light load stops a process within 10 s with exit code 0: HTTP drained (keep-alive clients
 * too), workers, pollers and the billing meter stopped, the transport and the database closed (servePlatform).
 * Embedded (`node apps/platform/dist/main.js`, PGlite) and a distributed app (marketplace-api on PostgreSQL
 * and Kafka, billing every 100 ms).
 */
const ROOT = join(__dirname, '..', '..', '..');
const ADMIN_KEY = `shutdown-admin-${uniqueName('k')}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(script: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [join(ROOT, script)], {
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Keep-alive clients sending requests one after another until stopped (light load). */
function load(port: number, paths: Array<{ method: string; path: string }>) {
  const agent = new Agent({ keepAlive: true, maxSockets: paths.length });
  let running = true;
  let answered = 0;
  const one = (method: string, path: string) =>
    new Promise<void>((resolve) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent,
          headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            answered += 1;
            resolve();
          });
        },
      );
      req.on('error', () => resolve());
      req.end(method === 'GET' ? undefined : '{}');
    });
  const loops = paths.map(async ({ method, path }) => {
    while (running) {
      await one(method, path);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    answered: () => answered,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

/** The last lines of a process's output that are not request logs (shown when a stop fails). */
const tail = (output: string) =>
  output
    .split('\n')
    .filter((line) => !line.includes('"responseTime"'))
    .slice(-25)
    .join('\n');

async function sigtermUnderLoad(started: Started, port: number) {
  const traffic = load(port, [
    { method: 'POST', path: '/api/v0/bundles/' },
    { method: 'GET', path: '/api/v0/machines' },
    { method: 'GET', path: '/readyz' },
  ]);
  try {
    await eventually(async () => (traffic.answered() >= 20 ? true : undefined), 30_000, 'requests answered');
    const sent = Date.now();
    started.child.kill('SIGTERM');
    const result = await Promise.race([
      started.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000)),
    ]);
    return { result, ms: Date.now() - sent };
  } finally {
    await traffic.stop();
  }
}

describe('SIGTERM stops a process within 10 s, exit code 0', () => {
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const child of running)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('embedded: node apps/platform/dist/main.js with demo hosts, under keep-alive traffic', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-shutdown-'));
    const port = await freePort();
    const started = start('apps/platform/dist/main.js', {
      PORT: String(port),
      RIGMARKET_DATA_DIR: dataDir,
      RIGMARKET_ADMIN_KEY: ADMIN_KEY,
      RIGMARKET_BILLING_INTERVAL_MS: '100',
    });
    running.push(started.child);
    try {
      await eventually(
        async () => (/Demo: simulated hosts listed/.test(started.output()) ? true : undefined),
        60_000,
        'the embedded platform up with its demo hosts',
      ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${tail(started.output())}`)));
      // A live stream open while it stops: the server ends it rather than waiting for the client.
      const stream = await openSse(`http://127.0.0.1:${port}/api/v0/instances/events/`, {
        Authorization: `Bearer ${ADMIN_KEY}`,
      });
      expect(stream.status).toBe(200);
      const { result, ms } = await sigtermUnderLoad(started, port);
      if (result === 'timeout' || result.code !== 0) process.stderr.write(tail(started.output()));
      expect({ result, within10s: ms < 10_000 }).toEqual({
        result: { code: 0, signal: null },
        within10s: true,
      });
      expect(started.output()).toMatch(/stopped on SIGTERM in \d+ ms: HTTP drained, workers stopped/);
      await stream.ended;
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('distributed: marketplace-api on PostgreSQL and Kafka, billing every 100 ms', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    const started = start('apps/marketplace-api/dist/main.js', {
      PORT: String(port),
      DATABASE_URL: database.url,
      KAFKA_BROKERS: requiredEnv('KAFKA_BROKERS'),
      RIGMARKET_KAFKA_NAMESPACE: `${uniqueName('shutdown')}.`,
      RIGMARKET_BILLING_INTERVAL_MS: '100',
      // production mode wants its keys given (docs/operations.md)
      RIGMARKET_REGISTRY_KEY: randomBytes(32).toString('hex'),
    });
    running.push(started.child);
    try {
      await eventually(
        async () =>
          /listening|Nest application successfully started/i.test(started.output()) ? true : undefined,
        60_000,
        'marketplace-api up',
      ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${tail(started.output())}`)));
      const { result, ms } = await sigtermUnderLoad(started, port);
      if (result === 'timeout' || result.code !== 0) process.stderr.write(tail(started.output()));
      expect({ result, within10s: ms < 10_000 }).toEqual({
        result: { code: 0, signal: null },
        within10s: true,
      });
      expect(started.output()).toMatch(/stopped on SIGTERM in \d+ ms: HTTP drained, workers stopped/);
    } finally {
      await database.drop();
    }
  }, 90_000);
});
