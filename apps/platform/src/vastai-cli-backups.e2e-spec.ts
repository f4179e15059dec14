import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { DirectoryBackupStore, INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { eventually, settledRebuildMismatches, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import { shIn } from './testing/instance-containers';
import { type RentedDockerPlatform, startRentedDockerPlatform } from './testing/rented-docker-platform';
import { runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-backups-admin-key';
const IMAGE = 'rigmarket/busybox:latest';
/** Short, so the test sees a token expire. */
const TOKEN_TTL_MS = 20_000;
const docker = dockerFromEnvironment();

interface ListedBackup {
  id: number;
  contract_id: number;
  type: string;
  machine_id: number;
  status: string;
  created_at: number;
  info: string;
}

/**
 * `vastai show instance-backups` and `vastai show instance-backup-files` with the real CLI, against the
 * embedded platform and a real host agent (Docker driver): a renter writes a file in the container, stops
 * the instance, the contract ends and the host runs `vastai cleanup machine`; the platform backs the
 * container's changes up before it is removed. The renter lists the backup and fetches its tar from the
 * printed URL alone; a stranger sees nothing and gets 404; a wrong or expired token is refused; the token is
 * in no event or log; the read models rebuild equal to the live ones. The tests run in order.
 */
describe('the vastai CLI: backups of instances the host removed', () => {
  let rig: RentedDockerPlatform | undefined;
  let app: INestApplication;
  let db: Database;
  let baseUrl: string;
  let hostKey: string;
  let renterKey: string;
  let strangerKey: string;
  let machineId: number;
  let instanceId: number;
  let backupId: number;
  let fileUrl: string;
  const payload = `kept-by-the-backup-${uniqueName('f')}`;
  const agentLog: string[] = [];
  const home = mkdtempSync(join(tmpdir(), 'vast-backups-home-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'rigmarket-backups-agent-'));
  const backupDir = mkdtempSync(join(tmpdir(), 'rigmarket-backups-store-'));
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const vastai = (key: string, ...args: string[]) => runVastai({ url: baseUrl, home, key }, args);
  const backupsOf = async (key: string, ...more: string[]) =>
    JSON.parse((await vastai(key, 'show', 'instance-backups', '--raw', ...more)).stdout) as ListedBackup[];

  beforeAll(async () => {
    rig = await startRentedDockerPlatform({
      adminKey: ADMIN_KEY,
      users: { host: 'backup-host', renter: 'backup-renter', other: 'backup-stranger' },
      instances: {
        backupStore: new DirectoryBackupStore(backupDir),
        backups: { tokenTtlMs: TOKEN_TTL_MS, sweepIntervalMs: 0 },
      },
      stateDir,
      image: IMAGE,
      log: (line) => agentLog.push(line),
    });
    ({ app, db, baseUrl, hostKey, renterKey, otherKey: strangerKey, machineId, instanceId } = rig);
  }, 240_000);

  afterAll(async () => {
    await rig?.close();
    for (const dir of [home, stateDir, backupDir]) rmSync(dir, { recursive: true, force: true });
  });

  it('vastai cleanup machine: once the contract ended, the stopped instance is backed up before its container is removed', async () => {
    const container = docker.getContainer(containerName(instanceId));
    await shIn(docker, container, `mkdir -p /root/work && echo ${payload} > /root/work/note.txt`);
    expect((await vastai(renterKey, 'stop', 'instance', String(instanceId))).out).not.toContain('failed');
    await eventually(
      async () => {
        const res = await http().get(`/api/v0/instances/${instanceId}/`).set(as(renterKey));
        return res.body.instances?.actual_status === 'stopped' ? true : undefined;
      },
      60_000,
      'the instance stopped',
    );
    // nothing is removed (or backed up) while the contract runs
    expect(JSON.parse((await vastai(hostKey, 'cleanup', 'machine', String(machineId))).stdout)).toMatchObject(
      {
        instances_removed: [],
      },
    );
    expect(await backupsOf(renterKey)).toEqual([]);

    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(hostKey))
      .send({ machine: machineId, end_date: Math.floor(Date.now() / 1000) - 60 })
      .expect(200);
    const removed = await eventually(
      async () => {
        const answer = JSON.parse(
          (await vastai(hostKey, 'cleanup', 'machine', String(machineId))).stdout,
        ) as {
          instances_removed: number[];
        };
        return answer.instances_removed.length > 0 ? answer : undefined;
      },
      30_000,
      'the ended contract in instance-lifecycle',
    );
    expect(removed.instances_removed).toEqual([instanceId]);
    // the container goes once its backup has been read
    await eventually(
      async () =>
        (await container.inspect().then(
          () => false,
          () => true,
        )) || undefined,
      120_000,
      'the container removed',
    );
    expect(agentLog.some((line) => /backup \d+ of instance \d+: \d+ bytes sent/.test(line))).toBe(true);
  }, 240_000);

  it("vastai show instance-backups: the renter's backup, newest first, success once stored; --contract-id filters", async () => {
    const [backup] = await eventually(
      async () => {
        const rows = await backupsOf(renterKey);
        return rows[0]?.status === 'success' ? rows : undefined;
      },
      60_000,
      'the backup stored',
    );
    expect(backup).toMatchObject({
      contract_id: instanceId,
      type: 'instance',
      machine_id: machineId,
      status: 'success',
      info: expect.stringContaining('upper/'),
    });
    expect(Math.abs(backup!.created_at - Date.now() / 1000)).toBeLessThan(600);
    backupId = backup!.id;
    // the table a user reads
    const table = (await vastai(renterKey, 'show', 'instance-backups')).stdout;
    expect(table).toMatch(new RegExp(`${backupId}\\s+${instanceId}\\s+instance\\s+${machineId}\\s+success`));
    expect((await backupsOf(renterKey, '--contract-id', String(instanceId))).map((b) => b.id)).toEqual([
      backupId,
    ]);
    expect(await backupsOf(renterKey, '--contract-id', String(instanceId + 1))).toEqual([]);
    // the backup outlives the instance: it is gone from show instances
    const shown = JSON.parse((await vastai(renterKey, 'show', 'instances', '--raw')).stdout) as {
      id: number;
    }[];
    expect(shown.map((i) => i.id)).not.toContain(instanceId);
  }, 120_000);

  it('vastai show instance-backup-files: a URL that alone downloads a tar holding the file written in the container', async () => {
    const listed = await vastai(renterKey, 'show', 'instance-backup-files', String(instanceId));
    expect(listed.out).toMatch(/authorization token: \S+ \(already embedded in the URLs below\)/);
    expect(listed.out).toContain(`expires in: ${TOKEN_TTL_MS / 1000} seconds`);
    expect(listed.out).toContain('upper.tar');
    // the token is base64url: the table's colour codes right after it are not part of the URL
    fileUrl = /(https?:\/\/\S+?\?Authorization=[\w-]+)/.exec(listed.out)?.[1] ?? '';
    expect(fileUrl).toContain(`/api/v0/instance_backups/files/${backupId}/upper.tar?Authorization=`);

    // plain HTTP GET, no key
    const res = await fetch(fileUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    const tar = Buffer.from(await res.arrayBuffer());
    const file = join(backupDir, 'downloaded.tar');
    writeFileSync(file, tar);
    const names = execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).split('\n');
    expect(names).toEqual(expect.arrayContaining(['upper/root/work/', 'upper/root/work/note.txt']));
    // only what the container changed: nothing of the image
    expect(names.filter((n) => n.startsWith('upper/bin/'))).toEqual([]);
    expect(execFileSync('tar', ['-xOf', file, 'upper/root/work/note.txt'], { encoding: 'utf8' }).trim()).toBe(
      payload,
    );
    rmSync(file);

    // the header form of the same token
    const token = new URL(fileUrl).searchParams.get('Authorization') ?? '';
    const viaHeader = await fetch(fileUrl.split('?')[0]!, { headers: { Authorization: token } });
    expect(viaHeader.status).toBe(200);
    expect(Buffer.from(await viaHeader.arrayBuffer()).equals(tar)).toBe(true);
  }, 120_000);

  it('vastai show instance-backup-files: another user sees no backups and gets 404; a wrong or expired token is refused', async () => {
    expect(await backupsOf(strangerKey)).toEqual([]);
    expect(await backupsOf(strangerKey, '--contract-id', String(instanceId))).toEqual([]);
    const other = await vastai(strangerKey, 'show', 'instance-backup-files', String(instanceId));
    expect(other.out).toMatch(/404/);
    expect(other.out).not.toContain('upper.tar');
    const res = await http().get(`/api/v0/instance_backups/${instanceId}/download/`).set(as(strangerKey));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, error: 'no_such_backup' });

    const base = fileUrl.split('?')[0]!;
    const wrong = await fetch(`${base}?Authorization=${'x'.repeat(43)}`);
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ success: false, error: 'invalid_token' });
    expect((await fetch(base, { headers: { Authorization: `Bearer ${strangerKey}` } })).status).toBe(403);
    expect((await fetch(base)).status).toBe(401);
    // the same token names this backup only
    const elsewhere = fileUrl.replace(`/files/${backupId}/`, `/files/${backupId + 1}/`);
    expect((await fetch(elsewhere)).status).toBe(403);
    // and stops working when it expires
    await eventually(
      async () => ((await fetch(fileUrl)).status === 403 ? true : undefined),
      TOKEN_TTL_MS + 20_000,
      'the token expired',
    );
  }, 120_000);

  it('records the backup as events with no token in them or in a log, and the read models rebuild equal to live', async () => {
    const runtime = app.get<ContextRuntime>(INSTANCE_RUNTIME);
    const events = await runtime.db.transaction((sql) =>
      runtime.store.readStream(sql, `instance_backup-${backupId}`),
    );
    expect(events.map((e) => e.type)).toEqual([
      'InstanceBackupRequested',
      'InstanceBackupStored',
      'InstanceBackupDownloadAuthorized',
    ]);
    const token = new URL(fileUrl).searchParams.get('Authorization') ?? '';
    expect(token.length).toBeGreaterThan(30);
    const stored = await db.query<{ data: unknown }>(`SELECT data FROM instance_lifecycle.events`);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(agentLog.join('\n')).not.toContain(token);
    // the store keeps the object in the backup's own folder, readable by the platform's user only
    expect(readdirSync(join(backupDir, String(backupId)))).toEqual(['upper.tar']);
    expect(await settledRebuildMismatches(runtime)).toEqual([]);
  }, 120_000);
});
