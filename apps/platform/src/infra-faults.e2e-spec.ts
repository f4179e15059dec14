import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uniqueName } from '@rigmarket/testing';
import { DistributedPlatform, crashRun, freePort } from './testing/crash-workload';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');

/**
 * The distributed platform's own infrastructure failing under the crash workload (docs/reliability.md):
 * the Kafka broker killed -9 and started again, then PostgreSQL stopped as a crash would (immediate mode,
 * WAL recovery at start) and started again. The test runs its own broker and its own PostgreSQL cluster on
 * free ports (the shared ones of the test machine are never touched), started by the repository's infra
 * scripts. After the faults: the same checks as the kill -9 test (convergence, no acknowledged write lost,
 * no event doubled, no compute without running, ledger balanced, verify equal).
 */
describe('infrastructure faults under the workload (distributed): Kafka broker kill -9, PostgreSQL restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rigmarket-faults-'));
  // PostgreSQL runs as its own OS user when the tests run as root: it must reach its folder.
  chmodSync(dir, 0o755);
  const services: NodeJS.ProcessEnv = { ...process.env };
  let platform: DistributedPlatform | undefined;
  let output = '';

  async function script(path: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
    const { stdout, stderr } = await run('bash', [join(ROOT, path)], {
      env: { ...services, ...env },
      timeout: 120_000,
    }).catch((error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`${path}: ${error.message}\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    });
    output += stdout + stderr;
  }

  const kafkaKill9 = () => {
    const pid = Number(readFileSync(join(dir, 'kafka', 'broker.pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
  };

  beforeAll(async () => {
    services.PG_DIR = join(dir, 'pg');
    services.PG_PORT = String(await freePort());
    // Durable commits, as in production: an immediate stop must not lose an acknowledged write.
    services.PG_DURABLE = '1';
    services.KAFKA_DIR = join(dir, 'kafka');
    services.KAFKA_PORT = String(await freePort());
    services.KAFKA_CONTROLLER_PORT = String(await freePort());
    services.KAFKA_HEAP_OPTS = '-Xms256m -Xmx512m';
    await script('infra/postgres/start.sh');
    await script('infra/kafka/start.sh');
    platform = new DistributedPlatform(
      `postgres://rigmarket:rigmarket@127.0.0.1:${services.PG_PORT}/rigmarket`,
      {
        KAFKA_BROKERS: `127.0.0.1:${services.KAFKA_PORT}`,
        RIGMARKET_KAFKA_NAMESPACE: `${uniqueName('faults')}.`,
      },
    );
    await platform.start();
  }, 300_000);

  afterAll(async () => {
    await platform?.close();
    await script('infra/kafka/stop.sh').catch(() => undefined);
    await script('infra/postgres/stop.sh', { PG_STOP_MODE: 'immediate' }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('converges after each fault; no acknowledged write lost, no event doubled, ledger balanced, verify equal', async () => {
    const p = platform!;
    let round = 0;
    const answers = await crashRun(
      {
        call: (method, path, body) => p.call(method, path, body),
        kill9: async (r) => {
          round = r;
          if (r === 0) kafkaKill9();
          else await script('infra/postgres/stop.sh', { PG_STOP_MODE: 'immediate' });
        },
        restart: async () => {
          // Down for a moment, as a supervisor would restart it.
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          await script(round === 0 ? 'infra/kafka/start.sh' : 'infra/postgres/start.sh');
        },
        stopAndOpenStore: () => p.settleAndStop(),
      },
      'distributed, Kafka broker kill -9 and PostgreSQL restart',
      2,
    );
    // While a service was away, requests were refused with 503 (or 502 from the router), never a 500.
    expect([...answers.keys()].filter((status) => status >= 500 && status !== 502 && status !== 503)).toEqual(
      [],
    );
  }, 300_000);

  it('printed no unhandled errors', () => {
    expect(platform!.output).not.toMatch(/UnhandledPromiseRejection|TypeError/);
    expect(output).not.toMatch(/ERROR/);
  });
});
