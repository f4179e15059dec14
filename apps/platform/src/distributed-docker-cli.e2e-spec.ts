import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MACHINE_LABEL, containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { Client } from 'pg';
import request from 'supertest';
import { removeMachineContainers } from './testing/machine-containers';
import { type SseEvent, openSse } from './testing/sse-client';
import { grantCredit } from './testing/users';

/**
 * The whole journey as an operator deploys it: the distributed platform (the four apps as
 * separate OS processes on PostgreSQL and Kafka, behind the nginx edge), a host agent process with the
 * Docker driver registering its machine through the edge, and the real `vastai` CLI renting it: a real
 * container runs, and stop, start, label, logs and destroy act on it; the live streams of instance changes
 * and of its log pass through the edge.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(ROOT, '.infra', 'vastai-venv', 'bin', 'vastai');
const ADMIN_KEY = `dist-admin-${uniqueName('k')}`;
const IMAGE = 'rigmarket/busybox:latest';
const APPS = ['identity-2fa', 'marketplace-api', 'instance-lifecycle', 'sync-maintenance'] as const;
const docker = dockerFromEnvironment();

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Row {
  id: number;
  actual_status: string | null;
  intended_status: string;
  label: string | null;
  ssh_port: number | null;
}

describe('the distributed platform behind the edge, a host agent process with Docker, and the vastai CLI', () => {
  const logDir = mkdtempSync(join(tmpdir(), 'rigmarket-dist-'));
  const nginxPrefix = mkdtempSync(join(tmpdir(), 'rigmarket-dist-edge-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'rigmarket-dist-agent-'));
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));
  const processes: ChildProcess[] = [];
  let agent: ChildProcess | undefined;
  let drop: (() => Promise<void>) | undefined;
  let nginxEnv: NodeJS.ProcessEnv = {};
  let edge = '';
  let machineId = 0;
  let cliEnv: NodeJS.ProcessEnv = {};

  const spawnLogged = (name: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(logDir, `${name}.log`));
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    return child;
  };
  const logsOf = (name: string) => {
    try {
      return readFileSync(join(logDir, `${name}.log`), 'utf8')
        .split('\n')
        .slice(-30)
        .join('\n');
    } catch {
      return '(no log)';
    }
  };
  const vastai = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(CLI, args, { env: cliEnv, timeout: 90_000 });
      return { stdout, out: stdout + stderr };
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      return { stdout: e.stdout ?? '', out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };
  const showInstance = async (id: number): Promise<Row | null> => {
    const { stdout } = await vastai('show', 'instance', String(id), '--raw');
    return stdout.includes('"instances": null') ? null : (JSON.parse(stdout) as Row);
  };
  const until = (id: number, status: string) =>
    eventually(
      async () => {
        const row = await showInstance(id);
        return row?.actual_status === status ? row : undefined;
      },
      90_000,
      `instance ${id} ${status}`,
    );
  const container = (id: number) =>
    docker
      .getContainer(containerName(id))
      .inspect()
      .then(
        (info) => info,
        (error: { statusCode?: number }) => (error.statusCode === 404 ? null : Promise.reject(error)),
      );
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const [edgePort, ...appPorts] = await Promise.all([freePort(), ...APPS.map(() => freePort())]);
    const common: NodeJS.ProcessEnv = {
      DATABASE_URL: database.url,
      KAFKA_BROKERS: requiredEnv('KAFKA_BROKERS'),
      RIGMARKET_KAFKA_NAMESPACE: `${uniqueName('dist')}.`,
      RIGMARKET_ADMIN_KEY: ADMIN_KEY,
      // The renter (the admin here) has test credit; billing is off so no run stops the instance mid-test.
      RIGMARKET_BILLING_INTERVAL_MS: '0',
      LOG_LEVEL: 'warn',
    };
    APPS.forEach((app, i) =>
      processes.push(
        spawnLogged(app, [join(ROOT, 'apps', app, 'dist', 'main.js')], {
          ...common,
          PORT: String(appPorts[i]),
        }),
      ),
    );
    for (const [i, app] of APPS.entries()) {
      await eventually(
        async () =>
          (await request(`http://127.0.0.1:${appPorts[i]}`).get('/readyz')).status === 200 ? true : undefined,
        90_000,
        `${app} ready`,
      ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${logsOf(app)}`)));
    }
    // Ids of their own, so that container names and machine labels never meet those of other runs.
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    await sql.query(`ALTER SEQUENCE marketplace.machine_ids RESTART WITH ${randomInt(2_000_000, 3_000_000)}`);
    await sql.query(
      `ALTER SEQUENCE instance_lifecycle.instance_ids RESTART WITH ${randomInt(2_000_000_000, 2_100_000_000)}`,
    );
    await sql.end();

    chmodSync(nginxPrefix, 0o755); // nginx's workers run unprivileged and must enter the prefix
    nginxEnv = {
      ...process.env,
      EDGE_PORT: String(edgePort),
      IDENTITY_PORT: String(appPorts[0]),
      MARKETPLACE_PORT: String(appPorts[1]),
      INSTANCE_PORT: String(appPorts[2]),
      SYNC_PORT: String(appPorts[3]),
      NGINX_PREFIX: nginxPrefix,
    };
    await run('bash', [join(ROOT, 'infra', 'nginx', 'start.sh')], { env: nginxEnv, timeout: 120_000 });
    edge = `http://127.0.0.1:${edgePort}`;
    cliEnv = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: edge,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: ADMIN_KEY,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    await eventually(
      async () =>
        (await request(edge).get('/api/v0/machines').set(admin)).status === 200 ? true : undefined,
      60_000,
      'the admin key in marketplace-api',
    );

    const agentArgs = [
      '--api-url',
      edge,
      '--api-key',
      ADMIN_KEY,
      '--driver',
      'docker',
      '--simulate-gpus',
      '2:RTX_4090',
      '--state-dir',
      stateDir,
      '--public-address',
      '127.0.0.1',
    ];
    agent = spawnLogged(
      'host-agent',
      [join(ROOT, 'apps', 'host-agent', 'dist', 'main.js'), ...agentArgs],
      {},
    );
    machineId = await eventually(
      async () => {
        const machines = (await request(edge).get('/api/v0/machines').set(admin)).body.machines as
          Array<{ id: number }> | undefined;
        return machines?.[0]?.id;
      },
      60_000,
      'the agent to register its machine',
    ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${logsOf('host-agent')}`)));
    await request(edge)
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({
        machine: machineId,
        price_gpu: 0.4,
        price_disk: 0.1,
        price_inetu: 0.01,
        price_inetd: 0.01,
        price_min_bid: 0.2,
        min_chunk: 1,
        end_date: 4102444800,
      })
      .expect(200);
    await request(edge)
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(admin)
      .send({ verification: 'verified' })
      .expect(200);
    // The admin rents here: renting needs credit.
    await grantCredit(edge, ADMIN_KEY, ADMIN_KEY);
  }, 300_000);

  afterAll(async () => {
    agent?.kill('SIGTERM');
    for (const child of processes) child.kill('SIGTERM');
    if (machineId) {
      await removeMachineContainers(docker, machineId);
    }
    await run('bash', [join(ROOT, 'infra', 'nginx', 'stop.sh')], { env: nginxEnv }).catch(() => undefined);
    await drop?.();
    for (const dir of [logDir, nginxPrefix, stateDir, home]) rmSync(dir, { recursive: true, force: true });
  });

  it('rents the agent’s machine with the CLI: a real container runs; logs, stop, start, label and destroy act on it', async () => {
    const offers = await eventually(
      async () => {
        const found = JSON.parse(
          (await vastai('search', 'offers', `machine_id=${machineId} num_gpus=1`, '--raw')).stdout,
        ) as Array<{ id: number; gpu_name: string }>;
        return found.length === 1 ? found : undefined;
      },
      60_000,
      'the offer in search',
    );
    expect(offers[0]).toMatchObject({ id: machineId * 1000 + 1, gpu_name: 'RTX 4090' });

    // A live stream of the renter's instance changes through the edge (docs/instances.md "Live streams").
    const changes = await openSse(`${edge}/api/v0/instances/events/`, {
      Authorization: `Bearer ${ADMIN_KEY}`,
    });
    expect(changes.status).toBe(200);
    const change = (e: SseEvent) => JSON.parse(e.data) as { id: number; actual_status: string | null };

    // instance-lifecycle learns of the listing over Kafka: until then the offer is unknown there.
    const created = await eventually(
      async () => {
        const { stdout, out } = await vastai(
          'create',
          'instance',
          String(offers[0]!.id),
          '--image',
          IMAGE,
          '--disk',
          '8',
          '--ssh',
          '--direct',
          '--onstart-cmd',
          'echo hello-from-distributed',
          '--raw',
        );
        const answer = JSON.parse(stdout || '{}') as { success?: boolean; new_contract?: number };
        // Thrown, not returned: a timeout then names the CLI's last answer.
        if (!answer.success) throw new Error(`vastai create instance said: ${out.slice(0, 500)}`);
        return answer;
      },
      120_000,
      'the instance created',
    );
    const id = created.new_contract!;

    const running = await until(id, 'running');
    // The agent's report reached the stream through the edge as it happened.
    const streamed = await changes.next(
      (e) => e.event === 'instance' && change(e).id === id && change(e).actual_status === 'running',
    );
    process.stdout.write(
      `distributed: running reached the stream through the edge ${streamed.receivedAt - Date.parse((JSON.parse(streamed.data) as { at: string }).at)} ms after the agent's report\n`,
    );
    changes.close();
    const log = await openSse(`${edge}/api/v0/instances/${id}/logs/stream/`, {
      Authorization: `Bearer ${ADMIN_KEY}`,
    });
    expect(log.status).toBe(200);
    const inspected = await container(id);
    expect(inspected?.State.Running).toBe(true);
    expect(inspected?.Config.Labels?.[MACHINE_LABEL]).toBe(String(machineId));
    expect(Number(inspected?.NetworkSettings.Ports['22/tcp']?.[0]?.HostPort)).toBe(running.ssh_port);

    // result_url is on the edge (/logs/<hash>.log), which the CLI fetches without a key
    await eventually(
      async () =>
        (await vastai('logs', String(id))).out.includes('hello-from-distributed') ? true : undefined,
      60_000,
      'the onstart output in the logs',
    );

    // The log stream through the edge carries the container's output too.
    await log.next((e) => e.event === 'log' && e.data.includes('hello-from-distributed'), 60_000);

    expect((await vastai('stop', 'instance', String(id))).out).not.toContain('Failed with error');
    await until(id, 'stopped');
    expect((await container(id))?.State.Running).toBe(false);
    expect((await vastai('start', 'instance', String(id))).out).not.toContain('Failed with error');
    await until(id, 'running');
    expect((await container(id))?.State.Running).toBe(true);
    await vastai('label', 'instance', String(id), 'distributed');
    expect(await showInstance(id)).toMatchObject({ label: 'distributed' });

    expect((await vastai('destroy', 'instance', String(id), '-y')).out).not.toContain('Failed with error');
    expect(await showInstance(id)).toBeNull();
    // ... and ends once the instance is destroyed.
    await log.next((e) => e.event === 'end', 10_000);
    await eventually(
      async () => ((await container(id)) === null ? true : undefined),
      60_000,
      'the container removed',
    );
  }, 300_000);
});
