import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { type HostAgent, containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, ScheduledJobRunner } from '@rigmarket/instance-lifecycle';
import { InProcessTransport } from '@rigmarket/messaging';
import { SYNC_RUNTIME, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import S3rver from 's3rver';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { separateDockerIds, startListedDockerAgent } from './testing/docker-agents';
import { InstanceContainers } from './testing/instance-containers';
import { removeMachineContainers } from './testing/machine-containers';
import { grantCredit, verifiedUser } from './testing/users';
import { runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-storage-admin-key-0123456789';
const SECRET = 'storage-e2e-secret-access-key-7f3a';
const IMAGE = 'rigmarket/busybox:latest';
const BUCKET = 'rig-cloud';

/**
 * The real `vastai` CLI's storage commands (issue 14) against the embedded platform: show connections (the
 * account's cloud connections, made over the API since the real service makes them in its web console) and
 * cloud copy both ways between a container of a real host agent (Docker driver, rclone on the host) and a
 * local S3 server (s3rver). sync-maintenance's own executor is the one that cannot copy, so a copy that
 * works is the agent's. The CLI exits 0 on most HTTP errors, so every test reads its output.
 */
describe('the vastai CLI: storage commands', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const mailer = new RecordingMailer();
  /** Real time, which the scheduled cloud copy test moves forward to make its job due. */
  const clock = { skipMs: 0, now: () => new Date(Date.now() + clock.skipMs) };
  const home = mkdtempSync(join(tmpdir(), 'vast-storage-home-'));
  let owner: string;
  let other: string;
  const docker = dockerFromEnvironment();
  const shell = new InstanceContainers();
  let agent: HostAgent | undefined;
  let machineId: number | undefined;
  let instanceId: number;
  let s3: S3rver | undefined;
  let s3Endpoint: string;
  let s3Client: S3Client;
  const stateDirs: string[] = [];
  const s3Dir = mkdtempSync(join(tmpdir(), 's3rver-storage-'));
  const agentLog: string[] = [];
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  const vastai = (key: string, ...args: string[]) =>
    runVastai({ url: `http://127.0.0.1:${port}`, home, key }, args);

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      sync: { copyExecutor: new UnavailableCopyExecutor() },
      clock,
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    await separateDockerIds(db);
    owner = await verifiedUser(app.getHttpServer(), mailer, 'storage-owner');
    other = await verifiedUser(app.getHttpServer(), mailer, 'storage-other');

    s3 = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: s3Dir,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    s3Endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
    s3Client = new S3Client({
      endpoint: s3Endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });

    let stateDir: string;
    ({ agent, machineId, stateDir } = await startListedDockerAgent({
      baseUrl: `http://127.0.0.1:${port}`,
      hostKey: ADMIN_KEY,
      docker,
      log: (line) => agentLog.push(line),
    }));
    stateDirs.push(stateDir);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, owner);
    instanceId = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${machineId! * 1000 + 1}/`)
          .set(as(owner))
          .send({ image: IMAGE, runtype: 'ssh' });
        return res.status === 200 ? (res.body.new_contract as number) : undefined;
      },
      60_000,
      'an instance',
    );
    await eventually(
      async () => ((await instance(owner, instanceId)).actual_status === 'running' ? true : undefined),
      60_000,
      'the instance running',
    );
  }, 180_000);
  afterAll(async () => {
    await agent?.stop();
    if (machineId !== undefined) await removeMachineContainers(docker, machineId);
    await app?.close();
    await db?.close();
    await s3?.close();
    rmSync(s3Dir, { recursive: true, force: true });
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  });

  const instance = async (key: string, id: number) =>
    JSON.parse((await vastai(key, 'show', 'instance', String(id), '--raw')).stdout) as {
      actual_status: string | null;
      status_msg: string | null;
    };
  const container = () => docker.getContainer(containerName(instanceId));
  const connect = async (name: string) =>
    (
      await http()
        .post('/api/v0/users/cloud_integrations/')
        .set(as(owner))
        .send({
          name,
          endpoint: s3Endpoint,
          access_key_id: 'S3RVER',
          secret_access_key: 'S3RVER',
        })
        .expect(200)
    ).body.id as number;
  /** Waits until the instance's status bar shows the end of the cloud copy, and returns that line. */
  const copyEnded = (what: RegExp) =>
    eventually(
      async () => {
        const msg = (await instance(owner, instanceId)).status_msg ?? '';
        return what.test(msg) ? msg : undefined;
      },
      90_000,
      `status_msg ${what}`,
    );

  it('vastai show connections: lists the connections made over the API, credentials masked; another account sees none and cannot delete them', async () => {
    const made = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({
        name: 'backups',
        cloud_type: 's3',
        endpoint: 'http://127.0.0.1:9/',
        access_key_id: 'AKIAEXAMPLEKEY1234',
        secret_access_key: SECRET,
      })
      .expect(200);
    const id = made.body.id as number;
    expect(made.body).toMatchObject({ success: true, id: expect.any(Number) });

    const table = await vastai(owner, 'show', 'connections');
    expect(table.out).toMatch(/ID\s+NAME\s+Cloud Type/);
    expect(table.out).toMatch(new RegExp(`${id}\\s+backups\\s+s3`));
    const raw = JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout) as unknown[];
    expect(raw).toEqual([
      expect.objectContaining({
        id,
        name: 'backups',
        cloud_type: 's3',
        endpoint: 'http://127.0.0.1:9',
        access_key_id: '****1234',
        secret_access_key: '********',
      }),
    ]);

    // The same name twice is refused; a malformed one too.
    const again = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({ name: 'backups', endpoint: 'http://127.0.0.1:9', access_key_id: 'a', secret_access_key: 'b' });
    expect({ status: again.status, error: again.body.error }).toEqual({
      status: 409,
      error: 'cloud_connection_exists',
    });
    const bad = await http()
      .post('/api/v0/users/cloud_integrations/')
      .set(as(owner))
      .send({ name: 'x', endpoint: 'ftp://host', access_key_id: 'a', secret_access_key: 'b' });
    expect({ status: bad.status, success: bad.body.success }).toEqual({ status: 400, success: false });

    // Another account: sees none, and its delete of this id is 404 as for an id that does not exist.
    expect(JSON.parse((await vastai(other, 'show', 'connections', '--raw')).stdout)).toEqual([]);
    const foreign = await http().delete(`/api/v0/users/cloud_integrations/${id}/`).set(as(other));
    expect({ status: foreign.status, error: foreign.body.error }).toEqual({
      status: 404,
      error: 'no_such_cloud_connection',
    });
    expect(JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout)).toHaveLength(1);

    // The secret is in no event, in the clear.
    const events = await db.query<{ data: unknown }>(`SELECT data FROM instance_lifecycle.events`);
    expect(JSON.stringify(events)).not.toContain(SECRET);

    await http().delete(`/api/v0/users/cloud_integrations/${id}/`).set(as(owner)).expect(200);
    expect(JSON.parse((await vastai(owner, 'show', 'connections', '--raw')).stdout)).toEqual([]);
  });

  it('vastai cloud copy: Instance To Cloud puts the files the container wrote into the bucket', async () => {
    const connection = await connect('s3rver-up');
    await shell.sh(
      container(),
      'mkdir -p /data/out/sub && head -c 300000 /dev/urandom | base64 > /data/out/sub/weights.txt && echo hello > /data/out/readme.txt',
    );
    const payload = await shell.sh(container(), 'cat /data/out/sub/weights.txt');
    expect(payload.length).toBeGreaterThan(400_000);
    const copied = await vastai(
      owner,
      'cloud',
      'copy',
      '--src',
      '/data/out/',
      '--dst',
      `/${BUCKET}/backup`,
      '--instance',
      String(instanceId),
      '--connection',
      String(connection),
      '--transfer',
      'Instance To Cloud',
    );
    expect(copied.out).toContain('Cloud Copy Started');
    const line = await copyEnded(/Cloud Copy Operation Finished|Cloud copy.*failed/);
    expect(line).toMatch(/^Cloud Copy Operation Finished: Cloud copy \(Instance To Cloud\), 0\.4 MB copied$/);
    const object = async (key: string) =>
      (await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();
    expect((await object('backup/sub/weights.txt')).trim()).toBe(payload);
    expect(await object('backup/readme.txt')).toBe('hello\n');
  });

  it('vastai cloud copy: Cloud To Instance puts an object of the bucket into the container', async () => {
    const connection = await connect('s3rver-down');
    const payload = randomBytes(200_000).toString('hex');
    await s3Client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'incoming/model/config.json', Body: payload }),
    );
    const copied = await vastai(
      owner,
      'cloud',
      'copy',
      '--src',
      `${BUCKET}/incoming`,
      '--dst',
      '/data/in',
      '--instance',
      String(instanceId),
      '--connection',
      String(connection),
      '--transfer',
      'Cloud To Instance',
    );
    expect(copied.out).toContain('Cloud Copy Started');
    const line = await copyEnded(/Cloud Copy Operation Finished: Cloud copy \(Cloud To Instance\)|failed/);
    expect(line).toContain('Cloud Copy Operation Finished');
    expect(await shell.sh(container(), 'cat /data/in/model/config.json')).toBe(payload);
  });

  it("vastai cloud copy: an unknown connection, another account's connection and another account's instance are 404", async () => {
    const copy = (key: string, connection: number) =>
      vastai(
        key,
        'cloud',
        'copy',
        '--src',
        '/data/out',
        '--dst',
        `/${BUCKET}/x`,
        '--instance',
        String(instanceId),
        '--connection',
        String(connection),
        '--transfer',
        'Instance To Cloud',
      );
    const theirs = (
      await http()
        .post('/api/v0/users/cloud_integrations/')
        .set(as(other))
        .send({ name: 'theirs', endpoint: s3Endpoint, access_key_id: 'S3RVER', secret_access_key: 'S3RVER' })
        .expect(200)
    ).body.id as number;
    for (const [key, connection] of [
      [owner, 999999],
      [owner, theirs],
      [other, theirs],
    ] as const) {
      const refused = await copy(key, connection);
      expect(refused.out).toContain('404');
      expect(refused.out).not.toContain('Cloud Copy Started');
    }
    const answer = await http()
      .post('/api/v0/commands/rclone/')
      .set(as(owner))
      .send({
        src: '/data/out',
        dst: `/${BUCKET}/x`,
        instance_id: String(instanceId),
        selected: String(theirs),
        transfer: 'Instance To Cloud',
      });
    expect({ status: answer.status, error: answer.body.error }).toEqual({
      status: 404,
      error: 'no_such_cloud_connection',
    });
  });

  it("leaves the connections' secret keys out of every event, outbox row and agent log line", async () => {
    // S3RVER is the secret key of the copies' connections (s3rver's own credentials).
    for (const schema of ['instance_lifecycle', 'sync_maintenance', 'identity', 'marketplace']) {
      const rows = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.events WHERE data::text LIKE '%S3RVER%' OR data::text LIKE $1`,
        [`%${SECRET}%`],
      );
      const outbox = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.outbox WHERE envelope::text LIKE '%S3RVER%' OR envelope::text LIKE $1`,
        [`%${SECRET}%`],
      );
      expect({ schema, n: Number(rows[0]!.n), outbox: Number(outbox[0]!.n) }).toEqual({
        schema,
        n: 0,
        outbox: 0,
      });
    }
    expect(agentLog.length).toBeGreaterThan(0);
    expect(agentLog.filter((line) => line.includes('S3RVER'))).toEqual([]);
  });

  it('vastai cloud copy --schedule: stores an hourly copy, and each run that comes due copies again', async () => {
    const connection = await connect('s3rver-hourly');
    await shell.sh(container(), 'mkdir -p /data/hourly && echo run-1 > /data/hourly/state.txt');
    const schedule = ['--schedule', 'HOURLY', '--day', '*', '--hour', '*'];
    // The CLI asks to confirm the upload cost of a scheduled Instance To Cloud copy: the user says y.
    const scheduled = await runVastai(
      { url: `http://127.0.0.1:${port}`, home, key: owner },
      [
        'cloud',
        'copy',
        '--src',
        '/data/hourly/',
        '--dst',
        `/${BUCKET}/hourly`,
        '--instance',
        String(instanceId),
        '--connection',
        String(connection),
        '--transfer',
        'Instance To Cloud',
        ...schedule,
      ],
      'y\n',
    );
    expect(scheduled.out).toContain(
      'add_scheduled_job insert: success - Scheduling HOURLY job to cloud copy',
    );
    const jobs = JSON.parse((await vastai(owner, 'show', 'scheduled-jobs', '--raw')).stdout) as Array<{
      id: number;
      instance_id: number;
      api_endpoint: string;
      request_method: string;
    }>;
    expect(jobs).toEqual([
      expect.objectContaining({
        instance_id: instanceId,
        api_endpoint: '/api/v0/commands/rclone/',
        request_method: 'POST',
      }),
    ]);
    const object = (key: string) =>
      s3Client
        .send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
        .then((got) => got.Body!.transformToString())
        .catch(() => undefined);
    // with --schedule the CLI only schedules
    expect(await object('hourly/state.txt')).toBeUndefined();

    for (const round of ['run-1', 'run-2']) {
      await shell.sh(container(), `echo ${round} > /data/hourly/state.txt`);
      clock.skipMs += 61 * 60_000;
      const runs = await app.get(ScheduledJobRunner).runOnce();
      expect(runs).toEqual([
        expect.objectContaining({
          jobId: jobs[0]!.id,
          ok: true,
          msg: expect.stringContaining('copy requested'),
        }),
      ]);
      await eventually(
        async () => ((await object('hourly/state.txt')) === `${round}\n` ? true : undefined),
        90_000,
        `the ${round} copy in the bucket`,
      );
      await copyEnded(/Cloud Copy Operation Finished|failed/);
    }
    // the same run is never handed over twice
    expect(await app.get(ScheduledJobRunner).runOnce()).toEqual([]);
    const handedOver = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM instance_lifecycle.events WHERE type = 'ScheduledCloudCopyDue'`,
    );
    expect(handedOver[0]!.n).toBe(2);

    // another account cannot schedule a copy of this instance
    const foreign = await runVastai({ url: `http://127.0.0.1:${port}`, home, key: other }, [
      'cloud',
      'copy',
      '--src',
      '/data/hourly/',
      '--dst',
      `/${BUCKET}/stolen`,
      '--instance',
      String(instanceId),
      '--connection',
      String(connection),
      '--transfer',
      'Cloud To Instance',
      '--end_date',
      '2099-01-01 00:00:00 AM',
      ...schedule,
    ]);
    expect(foreign.out).not.toContain('add_scheduled_job insert: success');
    expect(JSON.parse((await vastai(other, 'show', 'scheduled-jobs', '--raw')).stdout)).toEqual([]);
  }, 240_000);

  it('keeps the read models of instance-lifecycle and sync-maintenance equal to their rebuild', async () => {
    for (const token of [INSTANCE_RUNTIME, SYNC_RUNTIME])
      expect(await settledRebuildMismatches(app.get<ContextRuntime>(token, { strict: false }))).toEqual([]);
  });
});
