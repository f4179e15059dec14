import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '@rigmarket/event-sourcing';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import {
  ADMIN_KEY,
  DISTRIBUTED_APPS,
  DistributedPlatform,
  type Spawned,
  callAt,
  crashRun,
  destroyInstancesLeft,
  freePort,
  kill,
  spawnNode,
} from './testing/crash-workload';
import { eventsInFlightFromMetrics, waitUntilSettled } from './testing/settle';

/**
 * Crash recovery (docs/reliability.md), embedded: `node apps/platform/dist/main.js` on a data folder, the
 * crash workload (testing/crash-workload.ts) with kill -9 at random points, restart, again. Distributed:
 * the same workload through a router to the four apps on PostgreSQL and Kafka, each app killed in turn.
 */
describe('crash recovery: kill -9 at random points of a rent/stop/start/destroy workload (embedded)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-crash-'));
  let port = 0;
  let proc: Spawned | undefined;
  let output = '';
  const base = () => `http://127.0.0.1:${port}`;

  async function start(): Promise<void> {
    port = await freePort();
    proc = spawnNode(
      'apps/platform/dist/main.js',
      {
        NODE_ENV: 'production',
        RIGMARKET_DATA_DIR: dataDir,
        RIGMARKET_ADMIN_KEY: ADMIN_KEY,
        RIGMARKET_BILLING_INTERVAL_MS: '1000',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      (text) => (output += text),
    );
    await eventually(
      async () => ((await callAt(base(), 'GET', '/users/current/')).status === 200 ? true : undefined),
      60_000,
      'the platform answering',
    );
  }

  afterAll(async () => {
    await kill(proc, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.secrets.json`, { force: true });
  });

  it('converges after each restart; no acknowledged write lost, no event doubled, no compute for instances that never ran', async () => {
    await start();
    await crashRun(
      {
        call: (method, path, body) => callAt(base(), method, path, body),
        kill9: () => kill(proc, 'SIGKILL'),
        restart: start,
        // Like the distributed settleAndStop: nothing in flight when it stops (else lag reads as drift).
        stopAndOpenStore: async () => {
          await destroyInstancesLeft((method, path) => callAt(base(), method, path));
          await waitUntilSettled(() => eventsInFlightFromMetrics(base()));
          await kill(proc, 'SIGTERM');
          return Database.connect({ kind: 'pglite', dataDir });
        },
      },
      'embedded',
    );
  }, 150_000);

  it('printed no unhandled errors', () => {
    expect(output).not.toMatch(/UnhandledPromiseRejection|TypeError/);
  });
});

describe('crash recovery: kill -9 of each app under the workload (distributed: PostgreSQL, Kafka)', () => {
  let drop: () => Promise<void> = async () => undefined;
  let platform: DistributedPlatform | undefined;
  let killed = 0;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    platform = new DistributedPlatform(database.url, {
      KAFKA_BROKERS: requiredEnv('KAFKA_BROKERS'),
      RIGMARKET_KAFKA_NAMESPACE: `${uniqueName('crash')}.`,
    });
    await platform.start();
  }, 240_000);

  afterAll(async () => {
    await platform?.close();
    await drop();
  });

  it('each app killed in turn: converges; no acknowledged write lost, no event doubled, no compute for instances that never ran', async () => {
    const p = platform!;
    await crashRun(
      {
        call: (method, path, body) => p.call(method, path, body),
        kill9: async (round) => {
          // instance-lifecycle, marketplace-api, identity-2fa, sync-maintenance, in turn.
          killed = [2, 1, 0, 3][round % 4]!;
          await p.kill(killed, 'SIGKILL');
        },
        restart: () => p.startApp(killed),
        stopAndOpenStore: () => p.settleAndStop(),
      },
      'distributed',
      DISTRIBUTED_APPS.length,
    );
  }, 240_000);

  it('printed no unhandled errors', () => {
    expect(platform!.output).not.toMatch(/UnhandledPromiseRejection|TypeError/);
  });
});
