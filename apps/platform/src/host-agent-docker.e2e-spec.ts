import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  HostAgent,
  INSTANCE_LABEL,
  MACHINE_LABEL,
  containerName,
  dockerFromEnvironment,
} from '@rigmarket/host-agent';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { AgentSessions, INSTANCE_RUNTIME, InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import { SyncMaintenanceModule, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import {
  BOTH_MODES,
  type HarnessMode,
  type PlatformHarness,
  ed25519PublicKeyLine,
  eventually,
  rebuildMismatches,
  startPlatform,
  uniqueName,
} from '@rigmarket/testing';
import request from 'supertest';
import { separateDockerIds } from './testing/docker-agents';
import { shIn } from './testing/instance-containers';
import { rentOnceListed } from './testing/listed-machine';
import { removeMachineContainers } from './testing/machine-containers';
import { grantCredit, verifiedUser } from './testing/users';
import { httpInstanceFetcher, pollUntilRunning } from './instance-poll';

/**
 * A real host agent with the Docker driver, connected over the agent channel to the platform, runs real
 * containers on the Docker Engine (scripts/infra.sh up; the local image rigmarket/busybox:latest, no
 * registry). Embedded, and the acceptance run against the distributed adapters (PostgreSQL, Kafka).
 */
const ADMIN_KEY = 'admin-agent-key-0123456789';
const IMAGE = 'rigmarket/busybox:latest';
const docker = dockerFromEnvironment();

interface Harness extends PlatformHarness {
  mailer: RecordingMailer;
  baseUrl: string;
}

async function start(mode: HarnessMode): Promise<Harness> {
  const mailer = new RecordingMailer();
  const platform = await startPlatform(mode, [
    IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
    MarketplaceModule.forRoot(),
    // instance-lifecycle projects sync-maintenance's notices too: its rebuild reads that context's events
    SyncMaintenanceModule.forRoot({ copyExecutor: new UnavailableCopyExecutor() }),
    InstanceLifecycleModule.forRoot({
      agentChannel: { heartbeatIntervalMs: 200, heartbeatTimeoutMs: 20_000, offlineGraceMs: 3_000 },
    }),
  ]);
  await platform.app.listen(0, '127.0.0.1');
  const { port } = platform.app.getHttpServer().address() as AddressInfo;
  return { ...platform, mailer, baseUrl: `http://127.0.0.1:${port}` };
}

const HARDWARE_ASK = {
  price_gpu: 0.4,
  price_disk: 0.1,
  price_inetu: 0.01,
  price_inetd: 0.01,
  price_min_bid: 0.2,
  min_chunk: 1,
  end_date: 4102444800.0,
};

interface Row {
  id: number;
  actual_status: string | null;
  ssh_host: string | null;
  ssh_port: number | null;
  ports: Record<string, Array<{ HostIp: string; HostPort: string }>>;
  status_msg: string | null;
  [key: string]: unknown;
}

async function containerState(instanceId: number) {
  return docker
    .getContainer(containerName(instanceId))
    .inspect()
    .then(
      (info) => info,
      (error: { statusCode?: number }) => (error.statusCode === 404 ? null : Promise.reject(error)),
    );
}

describe.each(BOTH_MODES)('a host agent with the Docker driver, %s', (_mode, harnessMode) => {
  let h: Harness;
  let agent: HostAgent | undefined;
  let stateDir: string;
  let renterKey: string;
  let hostKey: string;
  let machineId: number;
  /** A local image with an ENTRYPOINT (rigmarket/busybox has none), for the entrypoint rules. */
  const entrypointImage = `rigmarket-test/entrypoint:${uniqueName('e')}`;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  const user = (prefix: string) => verifiedUser(h.app.getHttpServer(), h.mailer, prefix);

  const accept = (body: object, numGpus = 1) =>
    rentOnceListed(
      () =>
        http()
          .put(`/api/v0/asks/${machineId * 1000 + numGpus}/`)
          .set(as(renterKey))
          .send(body),
      'the offer listed in instance-lifecycle',
    );
  const show = async (id: number): Promise<Row | null> =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances;
  const until = (id: number, status: string) =>
    eventually(
      async () => {
        const row = await show(id);
        return row?.actual_status === status ? row : undefined;
      },
      60_000,
      `instance ${id} ${status}`,
    );
  const fetchLogs = async (id: number, body: object): Promise<string> => {
    const res = await http()
      .put(`/api/v0/instances/request_logs/${id}/`)
      .set(as(renterKey))
      .send(body)
      .expect(200);
    return (
      await http()
        .get(new URL(res.body.result_url as string).pathname)
        .expect(200)
    ).text;
  };

  beforeAll(async () => {
    h = await start(harnessMode);
    // Ids of their own, so that container names (rigmarket-instance-<id>) and machine labels of concurrent runs never meet.
    await separateDockerIds(h.db);
    await eventually(
      async () =>
        (await http().get('/api/v0/machines').set(as(ADMIN_KEY))).status === 200 ? true : undefined,
      60_000,
      'the admin key in marketplace',
    );
    renterKey = await user('renter');
    hostKey = await user('host');
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey);
    stateDir = await mkdtemp(join(tmpdir(), 'rigmarket-agent-'));
    const options = {
      apiUrl: h.baseUrl,
      apiKey: hostKey,
      stateDir,
      driver: 'docker' as const,
      simulateGpus: '2:RTX_4090',
      publicAddress: '127.0.0.1',
      docker,
      log: () => undefined,
    };
    agent = await HostAgent.start(options);
    machineId = agent.machineId;

    // A restart remembers its machine: no second registration.
    await agent.stop();
    agent = await HostAgent.start(options);
    expect(agent.machineId).toBe(machineId);
    const machines = await http().get('/api/v0/machines').set(as(hostKey)).expect(200);
    expect(machines.body.machines).toHaveLength(1);

    const base = await docker.createContainer({ Image: IMAGE, Cmd: ['true'] });
    const [repo, tag] = entrypointImage.split(':');
    await base.commit({ repo, tag, changes: 'ENTRYPOINT ["echo", "entry:"]' });
    await base.remove();

    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(hostKey))
      .send({ machine: machineId, ...HARDWARE_ASK })
      .expect(200);
    await http()
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(as(ADMIN_KEY))
      .send({ verification: 'verified' })
      .expect(200);
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    if (machineId !== undefined) {
      await removeMachineContainers(docker, machineId);
    }
    await docker
      .getImage(entrypointImage)
      .remove({ force: true })
      .catch(() => undefined);
    await h?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('runs a real container: running with mapped ports, logs with tail and filter, stop, start, destroy', async () => {
    const created = await accept({
      image: IMAGE,
      runtype: 'ssh_direc ssh_proxy',
      disk: 8,
      env: { TZ: 'UTC', '-p 8081:8081': '1' },
      onstart: 'echo hello-from-onstart; echo second-line',
    });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    const apiKey = created.body.instance_api_key as string;

    const running = await until(id, 'running');
    const info = await containerState(id);
    expect(info?.State.Running).toBe(true);
    expect(info?.Config.Labels).toMatchObject({
      'rigmarket.instance_id': String(id),
      'rigmarket.machine_id': String(machineId),
    });
    expect(info?.Config.Env).toEqual(expect.arrayContaining([`CONTAINER_API_KEY=${apiKey}`, 'TZ=UTC']));
    const published = info?.NetworkSettings.Ports as Record<string, Array<{ HostPort: string }>>;
    expect(running.ssh_host).toBe('127.0.0.1');
    expect(String(running.ssh_port)).toBe(published['22/tcp']?.[0]?.HostPort);
    expect(running.ports['22/tcp']?.[0]?.HostPort).toBe(String(running.ssh_port));
    expect(running.ports['8081/tcp']?.[0]?.HostPort).toBe(published['8081/tcp']?.[0]?.HostPort);

    // what the container printed (the service entrypoint, then onstart), with tail and filter applied
    await eventually(
      async () =>
        (await fetchLogs(id, { tail: '100' })).includes('rigmarket: container ready') ? true : undefined,
      30_000,
      'the container ready',
    );
    const all = await fetchLogs(id, { tail: '100' });
    expect(all).toContain('no sshd in this image');
    expect(all).toContain('hello-from-onstart\nsecond-line\n');
    expect(await fetchLogs(id, { filter: 'hello-from' })).toBe('hello-from-onstart\n');
    expect(await fetchLogs(id, { tail: 1 })).toBe('rigmarket: container ready\n');
    expect(await fetchLogs(id, { daemon_logs: 'true' })).toContain(`provision ${IMAGE}`);

    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    const stopped = await until(id, 'stopped');
    expect(stopped).toMatchObject({ ssh_port: null });
    expect((await containerState(id))?.State.Running).toBe(false);

    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    const again = await until(id, 'running');
    expect((await containerState(id))?.State.Running).toBe(true);
    expect(again.ssh_port).toEqual(expect.any(Number));

    const startedAt = (await containerState(id))?.State.StartedAt;
    await http().put(`/api/v0/instances/reboot/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () =>
        (await containerState(id))?.State.StartedAt !== startedAt &&
        (await show(id))?.actual_status === 'running'
          ? true
          : undefined,
      60_000,
      'the container restarted and running',
    );

    // recycle: a new container from the same settings (the image is local: no registry here)
    const before = (await containerState(id))?.Id;
    await http().put(`/api/v0/instances/recycle/${id}/`).set(as(renterKey)).send({}).expect(200);
    const recycled = await eventually(
      async () => {
        const info = await containerState(id);
        return info &&
          info.Id !== before &&
          info.State.Running &&
          (await show(id))?.actual_status === 'running'
          ? info
          : undefined;
      },
      60_000,
      'a recycled container running',
    );
    expect(recycled.Config.Labels).toMatchObject({
      'rigmarket.instance_id': String(id),
      'rigmarket.machine_id': String(machineId),
    });
    expect(recycled.Config.Env).toEqual(expect.arrayContaining([`CONTAINER_API_KEY=${apiKey}`]));

    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(id)) === null ? true : undefined),
      30_000,
      'the container removed',
    );
  });

  it('target_state stopped creates the container without starting it; a start runs it', async () => {
    const created = await accept({
      image: IMAGE,
      runtype: 'args',
      args: ['sleep', '600'],
      target_state: 'stopped',
    });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    await until(id, 'stopped');
    expect((await containerState(id))?.State.Status).toBe('created');
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    const running = await until(id, 'running');
    expect(running.ssh_port).toBeNull(); // args: no SSH
    expect((await containerState(id))?.Config.Cmd).toEqual(['sleep', '600']);
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(id)) === null ? true : undefined),
      30_000,
      'the container removed',
    );
  });

  it('keeps the image ENTRYPOINT for args (args_str appended) and replaces it by the service entrypoint for ssh', async () => {
    const args = (await accept({ image: entrypointImage, runtype: 'args', args_str: 'hello "two words"' }))
      .body.new_contract as number;
    const ended = await until(args, 'exited');
    expect(ended.status_msg).toContain('code 0');
    expect((await containerState(args))?.Config.Entrypoint).toEqual(['echo', 'entry:']);
    expect(await fetchLogs(args, {})).toBe('entry: hello two words\n');

    const ssh = (await accept({ image: entrypointImage, runtype: 'ssh_direct', onstart: 'echo onstart-ran' }))
      .body.new_contract as number;
    await until(ssh, 'running');
    expect((await containerState(ssh))?.Config.Entrypoint?.slice(0, 2)).toEqual(['sh', '-c']);
    await eventually(
      async () => ((await fetchLogs(ssh, { filter: 'onstart-ran' })) === 'onstart-ran\n' ? true : undefined),
      30_000,
      'onstart output',
    );
    for (const id of [args, ssh])
      await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('a container whose command exits 1 is exited, with the exit code in status_msg and its output in the logs', async () => {
    const created = await accept({ image: IMAGE, runtype: 'args', args_str: `sh -c 'echo boom; exit 1'` });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    const exited = await until(id, 'exited');
    expect(exited.status_msg).toContain('Container exited with code 1');
    expect((await containerState(id))?.State.ExitCode).toBe(1);
    expect(await fetchLogs(id, {})).toBe('boom\n');
    const start = await http()
      .put(`/api/v0/instances/${id}/`)
      .set(as(renterKey))
      .send({ state: 'running' })
      .expect(400);
    expect(start.body).toMatchObject({ error: 'instance_cannot_start' });
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(id)) === null ? true : undefined),
      30_000,
      'the container removed',
    );
  });

  it("ends a renter's poll loop at once when the real host cannot start the instance (an image it cannot pull)", async () => {
    // Nothing listens on 127.0.0.1:1, so the pull fails at once: the instance never runs, and the loop
    // (rigmarket wait-running) reports why instead of waiting for its timeout while storage is billed.
    const created = await accept({ image: `127.0.0.1:1/${uniqueName('missing')}:1`, runtype: 'ssh' });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    const progress: Array<string | null> = [];
    const polled = await pollUntilRunning(id, httpInstanceFetcher(h.baseUrl, renterKey, id), {
      timeoutMs: 120_000,
      intervalMs: 200,
      onProgress: (row) => progress.push(row?.actual_status ?? null),
    });
    expect(polled).toMatchObject({ outcome: 'dead', row: { actual_status: 'exited' } });
    expect(polled.message).toMatch(/is exited and will never reach running: Provisioning failed: /);
    expect(polled.waitedMs).toBeLessThan(60_000);
    expect(progress).not.toContain('running');
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it("mounts the renter's volume (volume_info) in the container; a later instance linking it finds the files", async () => {
    await http()
      .post('/api/v0/volumes/')
      .set(as(hostKey))
      .send({ size: 50, machine: machineId, price_disk: 0.2, end_date: 4102444800 })
      .expect(200);
    const volumeId = (
      await eventually(
        async () => {
          const res = await http()
            .put('/api/v0/volumes/')
            .set(as(renterKey))
            .send({ size: 5, id: machineId });
          return res.status === 200 ? res : undefined;
        },
        30_000,
        'the volume created',
      )
    ).body.volume_id as number;
    // instance-lifecycle learns of the volume over the transport: until then it is unknown there (404).
    const rentWith = (script: string) =>
      eventually(
        async () => {
          const res = await accept({
            image: IMAGE,
            runtype: 'args',
            args_str: `sh -c '${script}'`,
            volume_info: { volume_id: volumeId, mount_path: '/data' },
          });
          return res.status === 200 ? res : undefined;
        },
        30_000,
        'the volume known to instance-lifecycle',
      );
    const writer = (await rentWith('echo kept-on-the-volume > /data/note; echo written')).body
      .new_contract as number;
    await until(writer, 'exited'); // the command finished
    expect((await containerState(writer))?.Mounts).toEqual([
      expect.objectContaining({ Type: 'volume', Name: `rigmarket-volume-${volumeId}`, Destination: '/data' }),
    ]);
    await http().delete(`/api/v0/instances/${writer}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(writer)) === null ? true : undefined),
      30_000,
      'the first container removed',
    );

    const reader = (await rentWith('cat /data/note')).body.new_contract as number;
    await until(reader, 'exited');
    expect(await fetchLogs(reader, {})).toBe('kept-on-the-volume\n');
    await http().delete(`/api/v0/instances/${reader}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(reader)) === null ? true : undefined),
      30_000,
      'the second container removed',
    );
    await docker
      .getVolume(`rigmarket-volume-${volumeId}`)
      .remove()
      .catch(() => undefined);
  });

  it("writes the instance's SSH keys into /root/.ssh/authorized_keys (700/600) on provision, attach, detach and recycle", async () => {
    const alice = ed25519PublicKeyLine('alice@laptop');
    const bob = ed25519PublicKeyLine('bob@desk');
    const id = (await accept({ image: IMAGE, runtype: 'ssh' })).body.new_contract as number;
    // Attached while the host is still provisioning: the container gets it when it starts.
    await http().post(`/api/v0/instances/${id}/ssh/`).set(as(renterKey)).send({ ssh_key: alice }).expect(200);
    await until(id, 'running');
    const inContainer = (script: string) => shIn(docker, docker.getContainer(containerName(id)), script);
    const authorizedKeys = (expected: string) =>
      eventually(
        async () => {
          const text = await inContainer('cat /root/.ssh/authorized_keys 2>/dev/null || echo missing');
          return text === expected ? text : undefined;
        },
        30_000,
        `authorized_keys of instance ${id} = ${JSON.stringify(expected)}`,
      ).catch(async (error: unknown) => {
        throw new Error(
          `${String(error)}; it holds ${JSON.stringify(await inContainer('cat /root/.ssh/authorized_keys'))}`,
        );
      });
    await authorizedKeys(alice);
    expect(await inContainer('stat -c %a /root/.ssh /root/.ssh/authorized_keys')).toBe('700\n600');

    await http().post(`/api/v0/instances/${id}/ssh/`).set(as(renterKey)).send({ ssh_key: bob }).expect(200);
    await authorizedKeys(`${alice}\n${bob}`);
    await http().delete(`/api/v0/instances/${id}/ssh/1/`).set(as(renterKey)).expect(200);
    await authorizedKeys(bob);

    // A recycled container is a fresh one from the image: the host writes the keys again when it starts.
    const before = (await containerState(id))?.Id;
    await http().put(`/api/v0/instances/recycle/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => {
        const info = await containerState(id);
        return info && info.Id !== before && (await show(id))?.actual_status === 'running' ? true : undefined;
      },
      60_000,
      'a recycled container running',
    );
    await authorizedKeys(bob);
    await http().delete(`/api/v0/instances/${id}/ssh/2/`).set(as(renterKey)).expect(200);
    await authorizedKeys('');
    expect(await fetchLogs(id, { daemon_logs: 'true' })).toContain('authorized_keys: 0 key(s)');
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('when the channel drops, the agent reconnects within the grace period and goes on serving its instances', async () => {
    const id = (await accept({ image: IMAGE, runtype: 'ssh' })).body.new_contract as number;
    await until(id, 'running');
    const sessions = h.app.get(AgentSessions, { strict: false });
    const dropped = sessions.current(machineId);
    dropped?.close(4000, 'dropped by the test');
    await eventually(
      async () => {
        const current = sessions.current(machineId);
        return current && current !== dropped ? true : undefined;
      },
      10_000,
      'the agent back on the channel',
    );
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    await until(id, 'stopped');
    expect((await containerState(id))?.State.Running).toBe(false);
    // never offline on the way: it can still run again
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    await until(id, 'running');
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => ((await containerState(id)) === null ? true : undefined),
      30_000,
      'the container removed',
    );
  });

  it('when the agent disconnects and does not come back, its instances become offline; back, it converges to what changed meanwhile', async () => {
    const created = await accept({ image: IMAGE, runtype: 'ssh' });
    const id = created.body.new_contract as number;
    const kept = (await accept({ image: IMAGE, runtype: 'ssh' })).body.new_contract as number;
    await until(id, 'running');
    await until(kept, 'running');
    await agent?.stop();
    agent = undefined;
    const offline = await until(id, 'offline');
    expect(offline.status_msg).toContain('agent disconnected');
    // Meanwhile: one destroyed, one stopped, and a container of this machine no instance owns.
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await http().put(`/api/v0/instances/${kept}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    expect((await containerState(id))?.State.Running).toBe(true); // nobody told the host
    expect((await containerState(kept))?.State.Running).toBe(true);
    const strayId = 2_000_000_000 + randomInt(100_000_000);
    const stray = await docker.createContainer({
      Image: IMAGE,
      name: containerName(strayId),
      Cmd: ['sleep', '600'],
      Labels: { [MACHINE_LABEL]: String(machineId), [INSTANCE_LABEL]: String(strayId) },
    });
    await stray.start();

    agent = await HostAgent.start({
      apiUrl: h.baseUrl,
      apiKey: hostKey,
      stateDir,
      driver: 'docker',
      simulateGpus: '2:RTX_4090',
      publicAddress: '127.0.0.1',
      docker,
      log: () => undefined,
    });
    expect(agent.machineId).toBe(machineId);
    await eventually(
      async () => ((await containerState(id)) === null ? true : undefined),
      30_000,
      'the destroyed instance container removed',
    );
    await eventually(
      async () => ((await containerState(strayId)) === null ? true : undefined),
      30_000,
      'the container no instance owns removed',
    );
    await until(kept, 'stopped');
    expect((await containerState(kept))?.State.Running).toBe(false);
    await http().delete(`/api/v0/instances/${kept}/`).set(as(renterKey)).send({}).expect(200);
  });

  it("rebuilds instance-lifecycle's read models from the events the real host reported to the same rows", async () => {
    const runtime = h.app.get<ContextRuntime>(INSTANCE_RUNTIME, { strict: false });
    const mismatches = await eventually(
      async () => {
        const found = await rebuildMismatches(runtime);
        return found.length === 0 ? found : undefined;
      },
      30_000,
      'read models equal after rebuild',
    ).catch(() => rebuildMismatches(runtime));
    expect(mismatches).toEqual([]);
  });
});
