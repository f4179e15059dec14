import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import {
  INSTANCE_RUNTIME,
  SNAPSHOT_STALE_MS,
  SNAPSHOT_STALE_MSG,
  SnapshotTimeouts,
} from '@rigmarket/instance-lifecycle';
import { eventually, settledRebuildMismatches, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import { shIn } from './testing/instance-containers';
import { type RentedDockerPlatform, startRentedDockerPlatform } from './testing/rented-docker-platform';
import { runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-snapshot-admin-key';
const IMAGE = 'rigmarket/busybox:latest';
// The local registry of scripts/infra.sh up (infra/registry): htpasswd auth, on loopback.
const REGISTRY = process.env.REGISTRY_ADDRESS ?? '127.0.0.1:5000';
const REGISTRY_USER = process.env.REGISTRY_USER ?? 'rigmarket';
const REGISTRY_PASSWORD = process.env.REGISTRY_PASSWORD ?? 'registry-test-password';
const WRONG_PASSWORD = `wrong-${uniqueName('p')}`;
const docker = dockerFromEnvironment();

interface Row {
  id: number;
  actual_status: string | null;
  snapshot_status: string | null;
  snapshot_msg: string | null;
  snapshot_image: string | null;
  snapshot_digest: string | null;
}

/**
 * `vastai take snapshot` with the real CLI against the embedded platform and a real host agent (Docker
 * driver): the container, with a file written into it, is committed and pushed to the local registry with
 * the renter's login; the image pulled back holds the file. Wrong credentials give a failed snapshot that
 * show instance says; another account's instance is 404; the password is in no event, outbox row or log.
 */
describe('the vastai CLI taking snapshots of instances on a Docker host agent', () => {
  let rig: RentedDockerPlatform | undefined;
  let app: INestApplication;
  let db: Database;
  let renterKey: string;
  let otherKey: string;
  let instanceId: number;
  const agentLog: string[] = [];
  const home = mkdtempSync(join(tmpdir(), 'vast-home-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'rigmarket-snapshot-agent-'));
  const repo = `rigmarket-test/${uniqueName('snap')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')}`;
  const pulled: string[] = [];
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  let baseUrl: string;
  const vastai = (key: string, ...args: string[]) => runVastai({ url: baseUrl, home, key }, args);
  const show = async (id: number): Promise<Row> =>
    JSON.parse((await vastai(renterKey, 'show', 'instance', String(id), '--raw')).stdout) as Row;
  const snapshotEnded = (id: number) =>
    eventually(
      async () => {
        const row = await show(id);
        return row.snapshot_status === 'done' || row.snapshot_status === 'failed' ? row : undefined;
      },
      120_000,
      'the snapshot done or failed',
    );
  const takeSnapshot = (key: string, id: number, tag: string, password: string, ...more: string[]) =>
    vastai(
      key,
      'take',
      'snapshot',
      String(id),
      '--repo',
      `${repo}:${tag}`,
      '--container_registry',
      REGISTRY,
      '--docker_login_user',
      REGISTRY_USER,
      '--docker_login_pass',
      password,
      ...more,
    );

  beforeAll(async () => {
    rig = await startRentedDockerPlatform({
      adminKey: ADMIN_KEY,
      users: { host: 'host', renter: 'renter', other: 'other' },
      stateDir,
      image: IMAGE,
      log: (line) => agentLog.push(line),
    });
    ({ app, db, baseUrl, renterKey, otherKey, instanceId } = rig);
  }, 240_000);

  afterAll(async () => {
    await rig?.close();
    for (const image of pulled)
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('vastai take snapshot: commits the running container, pushes it with the login, and the image pulled back holds the file', async () => {
    const container = docker.getContainer(containerName(instanceId));
    const payload = `written-before-the-snapshot-${uniqueName('f')}`;
    await shIn(docker, container, `echo ${payload} > /root/snapshot-file.txt`);

    const taken = await takeSnapshot(renterKey, instanceId, 'v1', REGISTRY_PASSWORD);
    expect(taken.out).toContain('Snapshot request sent successfully');
    const running = await show(instanceId);
    // While it runs (or already done on a fast host): show instance says which image it pushes.
    expect(running.snapshot_image).toBe(`${REGISTRY}/${repo}:v1`);
    expect(['running', 'done']).toContain(running.snapshot_status);

    const done = await snapshotEnded(instanceId);
    expect(done.snapshot_status).toBe('done');
    expect(done.snapshot_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(done.snapshot_msg).toBe(`Snapshot 1 pushed: ${REGISTRY}/${repo}:v1@${done.snapshot_digest}`);
    // The container went on running (paused only while committed).
    expect((await show(instanceId)).actual_status).toBe('running');

    // The host kept no copy: the image comes back from the registry, with the renter's login.
    const image = `${REGISTRY}/${repo}:v1`;
    await expect(docker.getImage(image).inspect()).rejects.toMatchObject({ statusCode: 404 });
    pulled.push(image);
    const stream = await docker.pull(image, {
      authconfig: { username: REGISTRY_USER, password: REGISTRY_PASSWORD, serveraddress: REGISTRY },
    });
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve())),
    );
    const pulledImage = await docker.getImage(image).inspect();
    expect(pulledImage.RepoDigests).toContain(`${REGISTRY}/${repo}@${done.snapshot_digest}`);
    // Without the host's labels: a container run from it is not taken for the instance's.
    expect(pulledImage.Config.Labels ?? {}).not.toMatchObject({
      'rigmarket.instance_id': String(instanceId),
    });
    const copy = await docker.createContainer({
      Image: image,
      Cmd: ['sleep', '60'],
      Entrypoint: [],
      HostConfig: { NetworkMode: 'none' },
    });
    try {
      await copy.start();
      expect(await shIn(docker, copy, 'cat /root/snapshot-file.txt')).toBe(payload);
    } finally {
      await copy.remove({ force: true });
    }
    // The instance's own container never noticed.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await show(instanceId)).actual_status).toBe('running');
  }, 180_000);

  it('vastai take snapshot: wrong credentials end in a failed snapshot that show instance gives, and the next one may start', async () => {
    const taken = await takeSnapshot(renterKey, instanceId, 'v2', WRONG_PASSWORD, '--pause', 'false');
    expect(taken.out).toContain('Snapshot request sent successfully');
    const failed = await snapshotEnded(instanceId);
    expect(failed).toMatchObject({ snapshot_status: 'failed', snapshot_digest: null });
    expect(failed.snapshot_msg).toMatch(
      new RegExp(
        `^Snapshot 2 failed: docker push to ${REGISTRY.replace(/\./g, '\\.')} failed: .*(unauthorized|authentication|credentials)`,
        'i',
      ),
    );
    expect(failed.actual_status).toBe('running');
  }, 180_000);

  it('vastai take snapshot: refuses a bad repository, and another account gets 404 for the instance', async () => {
    const bad = await vastai(
      renterKey,
      'take',
      'snapshot',
      String(instanceId),
      '--repo',
      'Not A Repo',
      '--container_registry',
      REGISTRY,
    );
    expect(bad.out).toMatch(/400|repository name/);
    const res = await http()
      .post(`/api/v0/instances/take_snapshot/${instanceId}/`)
      .set(as(otherKey))
      .send({
        id: String(instanceId),
        container_registry: REGISTRY,
        personal_repo: `${repo}:x`,
        pause: 'true',
      });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, error: 'no_such_instance' });
    const other = await takeSnapshot(otherKey, instanceId, 'x', REGISTRY_PASSWORD);
    expect(other.out).toMatch(/404|No such instance/i);
    expect(other.out).not.toContain('Snapshot request sent successfully');
    expect((await show(instanceId)).snapshot_msg).toMatch(/^Snapshot 2 failed/);
  }, 120_000);

  it('vastai take snapshot: one at a time; a host that never answers (its agent went away) leaves it running until the sweep fails it', async () => {
    await rig!.stopAgent();
    const taken = await takeSnapshot(renterKey, instanceId, 'v3', REGISTRY_PASSWORD);
    expect(taken.out).toContain('Snapshot request sent successfully');
    expect(await show(instanceId)).toMatchObject({
      snapshot_status: 'running',
      snapshot_image: `${REGISTRY}/${repo}:v3`,
    });
    // One at a time: a second one while it runs is refused.
    const second = await takeSnapshot(renterKey, instanceId, 'v4', REGISTRY_PASSWORD);
    expect(second.out).toContain('Failed with error 409: Snapshot 3 of instance');
    expect(second.out).not.toContain('Snapshot request sent successfully');
    const sweeper = app.get(SnapshotTimeouts);
    // Not stale yet: nothing changes.
    expect(await sweeper.sweep()).toBe(0);
    expect((await show(instanceId)).snapshot_status).toBe('running');
    // SNAPSHOT_STALE_MS later (the sweep runs every minute): failed, and show instance says why.
    expect(await sweeper.sweep(new Date(Date.now() + SNAPSHOT_STALE_MS + 1_000))).toBe(1);
    expect(await show(instanceId)).toMatchObject({
      snapshot_status: 'failed',
      snapshot_msg: `Snapshot 3 failed: ${SNAPSHOT_STALE_MSG}`,
    });
  }, 120_000);

  it('keeps the registry passwords out of events, the outbox, host commands and the agent log, and rebuilds to the live rows', async () => {
    const stored: string[] = [];
    for (const table of ['events', 'outbox', 'host_commands', 'instances']) {
      const rows = await db.query<{ row: string }>(
        `SELECT t::text AS row FROM instance_lifecycle.${table} t`,
      );
      stored.push(...rows.map((r) => r.row));
    }
    expect(stored.some((row) => row.includes('InstanceSnapshotCompleted'))).toBe(true);
    expect(agentLog.some((line) => line.includes(`snapshot 1: pushed ${REGISTRY}/${repo}:v1@`))).toBe(true);
    for (const text of [...stored, ...agentLog]) {
      expect(text).not.toContain(REGISTRY_PASSWORD);
      expect(text).not.toContain(WRONG_PASSWORD);
    }
    const runtime = app.get<ContextRuntime>(INSTANCE_RUNTIME);
    expect(await settledRebuildMismatches(runtime)).toEqual([]);
  }, 120_000);
});
