import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { type HostAgent, containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { MARKETPLACE_RUNTIME } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { separateDockerIds, startListedDockerAgent } from './testing/docker-agents';
import { InstanceContainers } from './testing/instance-containers';
import { removeMachineContainers } from './testing/machine-containers';
import { grantCredit, verifiedUser } from './testing/users';
import { runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-clone-volume-admin-key-0123456789';
const IMAGE = 'rigmarket/busybox:latest';

interface VolumeRow {
  id: number;
  machine_id: number;
  disk_space: number;
  status: string;
  status_msg: string | null;
  cloned_from: number | null;
  instances: number[];
}

/**
 * `vastai clone volume` (issue 14) through the real CLI against the embedded platform, with two real host
 * agents (Docker driver) on two machines, each listing volume space: a file written into a volume by an
 * instance on the first machine is, after the clone onto the second machine's volume offer, read back by an
 * instance on the second machine that links the clone. The data crosses the two agents' channels
 * (instance-lifecycle relays the tar). The CLI exits 0 on most HTTP errors, so every test reads its output.
 */
describe('the vastai CLI: clone volume', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-clone-volume-home-'));
  let owner: string;
  let other: string;
  const docker = dockerFromEnvironment();
  const shell = new InstanceContainers();
  const agents: HostAgent[] = [];
  const stateDirs: string[] = [];
  const volumeIds: number[] = [];
  let sourceVolume: number;
  let token: string;
  let blobMd5: string;
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const vastai = (key: string, ...args: string[]) =>
    runVastai({ url: `http://127.0.0.1:${port}`, home, key }, args);
  const machine = (i: number) => agents[i]!.machineId;

  const volumes = async (key: string) =>
    JSON.parse((await vastai(key, 'show', 'volumes', '--raw')).stdout) as VolumeRow[];
  /** Rents an ssh instance on the machine with the volume at /data (`--link-volume`), running. */
  const rentLinking = async (machineId: number, volumeId: number) => {
    const id = await eventually(
      async () => {
        const created = await vastai(
          owner,
          'create',
          'instance',
          String(machineId * 1000 + 1),
          '--image',
          IMAGE,
          '--ssh',
          '--link-volume',
          String(volumeId),
          '--mount-path',
          '/data',
          '--raw',
        );
        const contract = /"new_contract":\s*(\d+)/.exec(created.stdout)?.[1];
        return contract === undefined ? undefined : Number(contract);
      },
      30_000,
      `an instance on machine ${machineId} linking volume ${volumeId}`,
    );
    await eventually(
      async () => {
        const row = JSON.parse((await vastai(owner, 'show', 'instance', String(id), '--raw')).stdout) as {
          actual_status: string | null;
        };
        return row.actual_status === 'running' ? true : undefined;
      },
      90_000,
      `instance ${id} running`,
    );
    return docker.getContainer(containerName(id));
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      sync: { copyExecutor: new UnavailableCopyExecutor() },
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    await separateDockerIds(db);
    owner = await verifiedUser(app.getHttpServer(), mailer, 'clone-owner');
    other = await verifiedUser(app.getHttpServer(), mailer, 'clone-other');
    // a source host and a destination host
    for (let n = 0; n < 2; n++) {
      const { agent, stateDir } = await startListedDockerAgent({
        baseUrl: `http://127.0.0.1:${port}`,
        hostKey: ADMIN_KEY,
        docker,
      });
      agents.push(agent);
      stateDirs.push(stateDir);
      // 50 GB of volume space on each: the second takes a clone of 10 GB at most 50.
      await http()
        .post('/api/v0/volumes/')
        .set(as(ADMIN_KEY))
        .send({ size: 50, machine: agent.machineId, price_disk: 0.2, end_date: 4102444800 })
        .expect(200);
    }
    await grantCredit(app.getHttpServer(), ADMIN_KEY, owner);

    // The owner's volume on the first machine, written by an instance that mounts it.
    const created = await vastai(owner, 'create', 'volume', String(machine(0)), '-s', '10', '-n', 'datasets');
    sourceVolume = Number(/'volume_id': (\d+)/.exec(created.out)?.[1]);
    expect(sourceVolume).toBeGreaterThan(0);
    volumeIds.push(sourceVolume);
    const writer = await rentLinking(machine(0), sourceVolume);
    token = randomBytes(12).toString('hex');
    await shell.sh(
      writer,
      `mkdir -p /data/sub && echo ${token} > /data/sub/note.txt && head -c 300000 /dev/urandom > /data/blob.bin`,
    );
    blobMd5 = await shell.md5(writer, '/data/blob.bin');
  }, 240_000);

  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    for (const agent of agents) await removeMachineContainers(docker, agent.machineId);
    for (const id of volumeIds)
      await docker
        .getVolume(`rigmarket-volume-${id}`)
        .remove()
        .catch(() => undefined);
    await app?.close();
    await db?.close();
    for (const dir of [home, ...stateDirs]) rmSync(dir, { recursive: true, force: true });
  });

  it("vastai clone volume: copies the volume onto another machine's volume offer; an instance linking the clone reads its files", async () => {
    const cloned = await vastai(owner, 'clone', 'volume', String(sourceVolume), String(machine(1)));
    expect(cloned.out).toMatch(/^Created\. \{.*'success': True/);
    const cloneId = Number(/'volume_id': (\d+)/.exec(cloned.out)?.[1]);
    expect(cloneId).toBeGreaterThan(sourceVolume);
    volumeIds.push(cloneId);

    // show volumes: the clone, on the second machine, at the source's size, online once the agents copied it
    const done = await eventually(
      async () => {
        const row = (await volumes(owner)).find((v) => v.id === cloneId);
        return row && row.status !== 'cloning' ? row : undefined;
      },
      60_000,
      'the clone copied',
    );
    expect(done).toMatchObject({
      machine_id: machine(1),
      disk_space: 10,
      status: 'online',
      status_msg: null,
      cloned_from: sourceVolume,
    });
    const table = await vastai(owner, 'show', 'volumes');
    // its row: ID, Cluster ID, Name (none: -), Disk, status
    expect(table.out).toMatch(new RegExp(`\\s${cloneId}\\s+-\\s+-\\s+10\\s+online\\s`));

    // An instance on the second machine linking the clone finds the source's files.
    const reader = await rentLinking(machine(1), cloneId);
    expect((await shell.sh(reader, 'cat /data/sub/note.txt')).trim()).toBe(token);
    expect(await shell.md5(reader, '/data/blob.bin')).toBe(blobMd5);
    expect((await volumes(owner)).find((v) => v.id === cloneId)?.instances).toHaveLength(1);
  }, 240_000);

  it('vastai clone volume: -s sets a larger size; a size below the source, beyond the free space, or not whole is refused', async () => {
    const before = (await volumes(owner)).length;
    for (const [size, reason] of [
      ['5', /smaller than volume \d+ \(10 GB\)/],
      ['45', /has \d+ GB free, not 45/],
      ['12.5', /whole number of GB/],
    ] as const) {
      const refused = await vastai(
        owner,
        'clone',
        'volume',
        String(sourceVolume),
        String(machine(1)),
        '-s',
        size,
      );
      expect(refused.out).toContain('400');
      expect(refused.out).toMatch(reason);
      expect(refused.out).not.toContain('Created.');
    }
    const answer = await http()
      .post('/api/v0/volumes/copy/')
      .set(as(owner))
      .send({ src_id: sourceVolume, dst_id: machine(1), size: 5 });
    expect({ status: answer.status, success: answer.body.success, error: answer.body.error }).toEqual({
      status: 400,
      success: false,
      error: 'invalid_size',
    });
    expect((await volumes(owner)).length).toBe(before);

    // A larger clone, on the source's own machine (-d: the tar is never compressed, so it changes nothing).
    const larger = await vastai(
      owner,
      'clone',
      'volume',
      String(sourceVolume),
      String(machine(0)),
      '-s',
      '12',
      '-d',
    );
    expect(larger.out).toContain('Created.');
    const largerId = Number(/'volume_id': (\d+)/.exec(larger.out)?.[1]);
    volumeIds.push(largerId);
    const row = await eventually(
      async () => {
        const found = (await volumes(owner)).find((v) => v.id === largerId);
        return found && found.status !== 'cloning' ? found : undefined;
      },
      60_000,
      'the larger clone copied',
    );
    expect(row).toMatchObject({
      machine_id: machine(0),
      disk_space: 12,
      status: 'online',
      cloned_from: sourceVolume,
    });
  }, 120_000);

  it("vastai clone volume: another user's volume, or an unknown one, is no such volume (404); nothing is created", async () => {
    for (const [key, src] of [
      [other, sourceVolume],
      [owner, 2_147_000_000],
    ] as const) {
      const refused = await vastai(key, 'clone', 'volume', String(src), String(machine(1)));
      expect(refused.out).toContain('404');
      expect(refused.out).not.toContain('Created.');
    }
    const answer = await http()
      .post('/api/v0/volumes/copy/')
      .set(as(other))
      .send({ src_id: sourceVolume, dst_id: machine(1) });
    expect({ status: answer.status, error: answer.body.error }).toEqual({
      status: 404,
      error: 'no_such_volume',
    });
    expect(await volumes(other)).toEqual([]);
    // ids and sizes out of range are refused before anything is looked up
    for (const body of [
      { src_id: 0, dst_id: machine(1) },
      { src_id: sourceVolume, dst_id: 2 ** 40 },
      { src_id: 'x', dst_id: machine(1) },
      { src_id: sourceVolume, dst_id: machine(1), size: 1e12 },
    ]) {
      const bad = await http().post('/api/v0/volumes/copy/').set(as(owner)).send(body);
      expect({ status: bad.status, success: bad.body.success }).toEqual({ status: 400, success: false });
    }
  });

  it("vastai clone volume: a clone whose destination's host agent is away is failed, with the reason in show volumes", async () => {
    const destination = agents[1]!;
    await destination.stop(); // its channel closes: instance-lifecycle no longer holds a session for it
    const cloned = await vastai(owner, 'clone', 'volume', String(sourceVolume), String(machine(1)));
    expect(cloned.out).toContain('Created.');
    const cloneId = Number(/'volume_id': (\d+)/.exec(cloned.out)?.[1]);
    volumeIds.push(cloneId);
    const failed = await eventually(
      async () => {
        const row = (await volumes(owner)).find((v) => v.id === cloneId);
        return row?.status === 'failed' ? row : undefined;
      },
      30_000,
      'the clone failed',
    );
    expect(failed.status_msg).toBe(
      `Clone of volume ${sourceVolume} failed: The host agent of machine ${machine(1)} (new volume ${cloneId}) is not connected; delete this volume and clone again once it is back`,
    );
    expect(failed.cloned_from).toBe(sourceVolume);
  });

  it('keeps the read models of marketplace and instance-lifecycle equal to their rebuild', async () => {
    for (const token of [MARKETPLACE_RUNTIME, INSTANCE_RUNTIME])
      expect(await settledRebuildMismatches(app.get<ContextRuntime>(token, { strict: false }))).toEqual([]);
  });
});
