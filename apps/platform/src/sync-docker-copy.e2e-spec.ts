import type { INestApplication } from '@nestjs/common';
import type { SyncEvent } from '@rigmarket/contracts';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { DockerCopyExecutor, SYNC_RUNTIME, SyncWorkflow, runSyncCommand } from '@rigmarket/sync-maintenance';
import { eventually } from '@rigmarket/testing';
import type Docker from 'dockerode';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { InstanceContainers, rentContainerPair } from './testing/instance-containers';

/**
 * A real copy between two real containers on the test Docker Engine (DOCKER_HOST, started by
 * `scripts/infra.sh up`): 20 MB of random bytes, throttled to 4 MB/s, canceled half-way through the
 * API (the destination stays incomplete, the job canceled), then started again: a new job copies from
 * the beginning and completes; md5sum inside both containers must match.
 * The containers stand in for the instances rented through the platform (testing/instance-containers.ts).
 */
const ADMIN_KEY = 'sync-docker-admin-key';
const SIZE = 20 * 1024 * 1024;
const RATE = 4 * 1024 * 1024;

describe('remote copy between two containers on the Docker Engine', () => {
  const containers = new InstanceContainers();
  let source: Docker.Container;
  let destination: Docker.Container;
  let app: INestApplication;
  let db: Database;
  let src: number;
  let dst: number;
  const http = () => request(app.getHttpServer());
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };

  const show = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/?owner=me`).set(admin).expect(200)).body.instances as {
      status_msg: string | null;
      remote_sync: { job_id: number; status: string; bytes_copied: number } | null;
    };
  const fileSize = (container: Docker.Container) => containers.size(container, '/data/big.bin');
  const startCopy = () =>
    eventually(
      async () => {
        const res = await http()
          .put('/api/v0/commands/copy_direct/')
          .set(admin)
          .send({
            client_id: 'me',
            src_id: String(src),
            dst_id: String(dst),
            src_path: '/data/big.bin',
            dst_path: '/data/',
          });
        return res.status === 200 ? (res.body as { job_id: number }) : undefined;
      },
      30_000,
      'the instances in sync-maintenance',
    );

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    const executor = new DockerCopyExecutor({
      docker: containers.docker,
      bytesPerSecond: RATE,
      progressIntervalMs: 200,
      resolve: containers.resolver,
    });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY },
      sync: { copyExecutor: executor },
    });
    await app.init();
    ({ src, dst, source, destination } = await rentContainerPair(
      app.getHttpServer(),
      admin,
      containers,
      SIZE,
    ));
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await db?.close();
    await containers.removeAll();
  });

  it('cancels half-way (destination incomplete, job canceled), then a new start copies from the beginning to identical bytes', async () => {
    const sourceMd5 = await containers.md5(source, '/data/big.bin');
    expect(await fileSize(source)).toBe(SIZE);

    const first = await startCopy();
    // a second start while it runs is refused
    const again = await http()
      .put('/api/v0/commands/copy_direct/')
      .set(admin)
      .send({ src_id: String(src), dst_id: String(dst), src_path: '/data/big.bin', dst_path: '/data/' })
      .expect(409);
    expect(again.body.error).toBe('sync_in_progress');
    const running = await eventually(
      async () => {
        const row = await show(dst);
        const percent = Number(/\((\d+)%\)/.exec(row.status_msg ?? '')?.[1] ?? -1);
        return row.remote_sync?.job_id === first.job_id && percent >= 30 ? row : undefined;
      },
      30_000,
      'the copy at 30%',
    );
    expect(running.status_msg).toMatch(
      new RegExp(`^Remote copy from instance ${src}: [\\d.]+ MB of 21\\.0 MB \\(\\d+%\\)$`),
    );

    // what `vastai cancel sync <dst>` sends
    const canceled = await http()
      .delete('/api/v0/commands/rclone/')
      .set(admin)
      .send({ client_id: 'me', dst_id: String(dst) })
      .expect(200);
    expect(canceled.body).toMatchObject({ success: true, job_id: first.job_id });
    expect(canceled.body.msg).toContain('canceled');
    const workflow = app.get(SyncWorkflow, { strict: false });
    await workflow.settled(first.job_id);

    const afterCancel = await show(dst);
    expect(afterCancel.remote_sync).toMatchObject({ job_id: first.job_id, status: 'canceled' });
    expect(afterCancel.status_msg).toContain('canceled');
    const partial = await fileSize(destination);
    expect(partial).toBeLessThan(SIZE);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await fileSize(destination)).toBe(partial); // nothing keeps copying after the cancel
    if (partial > 0) expect(await containers.md5(destination, '/data/big.bin')).not.toBe(sourceMd5);

    // a canceled copy does not resume: a new job starts from zero bytes and completes
    const second = await startCopy();
    expect(second.job_id).not.toBe(first.job_id);
    const done = await eventually(
      async () => {
        const row = await show(dst);
        return row.remote_sync?.job_id === second.job_id && row.remote_sync.status === 'completed'
          ? row
          : undefined;
      },
      60_000,
      'the second copy complete',
    );
    expect(done.remote_sync?.bytes_copied).toBe(SIZE);
    expect(done.status_msg).toBe(`Remote copy from instance ${src}: complete, 21.0 MB copied`);
    expect(await fileSize(destination)).toBe(SIZE);
    expect(await containers.md5(destination, '/data/big.bin')).toBe(sourceMd5);

    // the history shows it: job 1 canceled part-way, job 2's progress started again below where job 1 stopped
    const sync = app.get<ContextRuntime>(SYNC_RUNTIME, { strict: false });
    const history = (await sync.db.transaction((sql) => sync.store.readStream(sql, `sync-${dst}`))).map(
      (e) => ({ type: e.type, data: e.data }) as SyncEvent,
    );
    const progressOf = (jobId: number) =>
      history.flatMap((e) =>
        e.type === 'SyncProgressed' && e.data.jobId === jobId ? [e.data.bytesCopied] : [],
      );
    const firstProgress = progressOf(first.job_id);
    const secondProgress = progressOf(second.job_id);
    expect(history.map((e) => e.type)).toEqual(
      expect.arrayContaining(['SyncRequested', 'SyncStarted', 'SyncCanceled', 'SyncCompleted']),
    );
    expect(secondProgress[0]).toBeLessThan(firstProgress[firstProgress.length - 1]!);
    expect(history.filter((e) => e.type === 'SyncCanceled').map((e) => e.data.jobId)).toEqual([first.job_id]);
  }, 120_000);

  it('a cancel recorded elsewhere (another replica) stops the copy at its next progress report', async () => {
    const job = await startCopy();
    await eventually(
      async () => {
        const row = await show(dst);
        return row.remote_sync?.job_id === job.job_id &&
          row.remote_sync.status === 'running' &&
          row.remote_sync.bytes_copied > 0
          ? true
          : undefined;
      },
      30_000,
      'the copy running',
    );
    // straight to the stream, as another process would: this process's workflow gets no abort call
    const sync = app.get<ContextRuntime>(SYNC_RUNTIME, { strict: false });
    await runSyncCommand(
      sync,
      { type: 'CancelSync', instanceId: dst, requesterId: 1 },
      { correlationId: 'elsewhere', causationId: 'elsewhere' },
    );
    const started = Date.now();
    await app.get(SyncWorkflow, { strict: false }).settled(job.job_id);
    expect(Date.now() - started).toBeLessThan(2000); // progress is reported every 200 ms here
    const history = (await sync.db.transaction((sql) => sync.store.readStream(sql, `sync-${dst}`))).map(
      (e) => ({ type: e.type, data: e.data }) as SyncEvent,
    );
    const ofJob = history.filter((e) => e.data.jobId === job.job_id).map((e) => e.type);
    expect(ofJob[ofJob.length - 1]).toBe('SyncCanceled');
    expect(ofJob).not.toContain('SyncFailed');
    expect(ofJob).not.toContain('SyncCompleted');
  }, 60_000);
});
