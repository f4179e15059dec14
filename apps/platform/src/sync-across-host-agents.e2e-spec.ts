import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentCopyEvent, SyncEvent, VolumeCopyEvent } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { HostAgent, containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MARKETPLACE_RUNTIME, MarketplaceModule } from '@rigmarket/marketplace-api';
import { SYNC_RUNTIME, SyncMaintenanceModule, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import {
  BOTH_MODES,
  type PlatformHarness,
  eventually,
  rebuildMismatches,
  settledRebuildMismatches,
  startPlatform,
} from '@rigmarket/testing';
import request from 'supertest';
import { removeMachineContainers } from './testing/machine-containers';
import { InstanceContainers } from './testing/instance-containers';
import { grantCredit } from './testing/users';

/**
 * `vastai copy` between instances on two different machines, each served by its own host agent (two state
 * directories, two registrations, two agent channel connections; one Docker Engine underneath): the source
 * agent streams a tar of the path up the channel, instance-lifecycle relays it to the destination agent,
 * which extracts it into the container. sync-maintenance's own executor is the one that cannot copy
 * (UnavailableCopyExecutor), so a completed copy can only be the agents'. Embedded, and against the
 * distributed adapters (PostgreSQL, Kafka: the two contexts then share only events).
 */
const ADMIN_KEY = 'agent-copy-admin-key-0123456789';
const IMAGE = 'rigmarket/busybox:latest';
const SIZE = 6 * 1024 * 1024;
/**
 * The copy that is canceled copies a file three times larger: the cancel crosses the transport and the reactor
 * queue before the agents are told, and at 1 MB/s a 6 MB copy canceled at 30% ended first (completed, never
 * aborted) on a machine at load 18; canceled at 10% of 18.9 MB, ~17 s are left for it instead of ~4 s.
 */
const BIG = 3 * SIZE;
const RATE = 1024 * 1024;
const docker = dockerFromEnvironment();

const modules = () => [
  IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer: new RecordingMailer() }),
  MarketplaceModule.forRoot(),
  SyncMaintenanceModule.forRoot({ copyExecutor: new UnavailableCopyExecutor() }),
  InstanceLifecycleModule.forRoot({
    agentChannel: {
      heartbeatIntervalMs: 200,
      heartbeatTimeoutMs: 20_000,
      offlineGraceMs: 3_000,
      copyBytesPerSecond: RATE,
      copyProgressIntervalMs: 300,
    },
  }),
];

interface Row {
  actual_status: string | null;
  machine_id: number;
  status_msg: string | null;
  remote_sync: {
    job_id: number;
    status: string;
    bytes_copied: number;
    total_bytes: number | null;
    msg: string | null;
  } | null;
}

describe.each(BOTH_MODES)(
  'a copy between instances of two host agents on two machines, %s',
  (_name, mode) => {
    const shell = new InstanceContainers();
    let h: PlatformHarness;
    let baseUrl: string;
    const agents: HostAgent[] = [];
    const stateDirs: string[] = [];
    const http = () => request(h.app.getHttpServer());
    const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
    const show = async (id: number): Promise<Row> =>
      (await http().get(`/api/v0/instances/${id}/`).set(admin).expect(200)).body.instances as Row;
    const runtime = (token: symbol) => h.app.get<ContextRuntime>(token, { strict: false });
    const history = async <E>(token: symbol, streamId: string) => {
      const r = runtime(token);
      return (await r.db.transaction((sql) => r.store.readStream(sql, streamId))).map(
        (e) => ({ type: e.type, data: e.data }) as E,
      );
    };

    beforeAll(async () => {
      h = await startPlatform(mode, modules());
      await h.app.listen(0, '127.0.0.1');
      baseUrl = `http://127.0.0.1:${(h.app.getHttpServer().address() as AddressInfo).port}`;
      // Ids of their own: container names (rigmarket-instance-<id>) and machine labels of concurrent runs never meet.
      await h.db.query(
        `ALTER SEQUENCE marketplace.machine_ids RESTART WITH ${randomInt(100_000, 2_000_000)}`,
      );
      await h.db.query(
        `ALTER SEQUENCE instance_lifecycle.instance_ids RESTART WITH ${randomInt(10_000_000, 2_000_000_000)}`,
      );
      await eventually(
        async () => ((await http().get('/api/v0/machines').set(admin)).status === 200 ? true : undefined),
        60_000,
        'the admin key in marketplace',
      );
      for (const name of ['source-host', 'destination-host']) {
        const stateDir = await mkdtemp(join(tmpdir(), `rigmarket-${name}-`));
        stateDirs.push(stateDir);
        agents.push(
          await HostAgent.start({
            apiUrl: baseUrl,
            apiKey: ADMIN_KEY,
            stateDir,
            driver: 'docker',
            simulateGpus: '1',
            publicAddress: '127.0.0.1',
            docker,
            log: () => undefined,
          }),
        );
      }
      for (const agent of agents) {
        await http()
          .put('/api/v0/machines/create_asks/')
          .set(admin)
          .send({ machine: agent.machineId, price_gpu: 0.5, min_chunk: 1, end_date: 4102444800 })
          .expect(200);
      }
      // The admin rents here: renting needs credit.
      await grantCredit(h.app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
    }, 180_000);

    afterAll(async () => {
      for (const agent of agents) await agent.stop();
      for (const agent of agents) {
        await removeMachineContainers(docker, agent.machineId);
      }
      await h?.close();
      for (const dir of stateDirs) await rm(dir, { recursive: true, force: true });
    });

    it('copies, stops on a cancel part-way, and copies from zero on a new start; the read models rebuild equal', async () => {
      const [sourceHost, destinationHost] = agents as [HostAgent, HostAgent];
      expect(sourceHost.machineId).not.toBe(destinationHost.machineId);
      const rent = (machineId: number, onstart: string) =>
        eventually(
          async () => {
            const res = await http()
              .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
              .set(admin)
              .send({ image: IMAGE, runtype: 'ssh', onstart });
            return res.status === 200 ? (res.body.new_contract as number) : undefined;
          },
          60_000,
          `an instance on machine ${machineId}`,
        );
      const src = await rent(
        sourceHost.machineId,
        `mkdir -p /data/big && head -c ${BIG} /dev/urandom > /data/big/blob.bin && head -c ${SIZE} /dev/urandom > /data/blob.part && mv /data/blob.part /data/blob.bin`,
      );
      const dst = await rent(destinationHost.machineId, '');
      for (const id of [src, dst])
        await eventually(
          async () => ((await show(id)).actual_status === 'running' ? true : undefined),
          60_000,
          `instance ${id} running`,
        );
      expect((await show(src)).machine_id).toBe(sourceHost.machineId);
      expect((await show(dst)).machine_id).toBe(destinationHost.machineId);
      const source = docker.getContainer(containerName(src));
      const destination = docker.getContainer(containerName(dst));
      await eventually(
        async () => ((await shell.size(source, '/data/blob.bin')) === SIZE ? true : undefined),
        30_000,
        'the random file in the source',
      );
      const sourceMd5 = await shell.md5(source, '/data/blob.bin');

      const startCopy = (srcPath: string) =>
        eventually(
          async () => {
            const res = await http()
              .put('/api/v0/commands/copy_direct/')
              .set(admin)
              .send({
                client_id: 'me',
                src_id: String(src),
                dst_id: `C.${dst}`,
                src_path: srcPath,
                dst_path: '/copied/',
              });
            return res.status === 200 ? (res.body.job_id as number) : undefined;
          },
          30_000,
          'the instances in sync-maintenance',
        );

      // 1. Started (the large file, to the same name), visibly in progress on the destination, then canceled
      // past 10%.
      const first = await startCopy('/data/big/blob.bin');
      const running = await eventually(
        async () => {
          const row = await show(dst);
          const percent = Number(/\((\d+)%\)/.exec(row.status_msg ?? '')?.[1] ?? -1);
          return row.remote_sync?.job_id === first && row.remote_sync.status === 'running' && percent >= 10
            ? row
            : undefined;
        },
        60_000,
        'the agents copy at 10%',
      );
      expect(running.status_msg).toMatch(
        new RegExp(`^Remote copy from instance ${src}: [\\d.]+ MB of 18\\.9 MB \\(\\d+%\\)$`),
      );
      expect(running.remote_sync).toMatchObject({ total_bytes: BIG });
      const canceled = await http()
        .delete('/api/v0/commands/copy_direct/')
        .set(admin)
        .send({ dst_id: String(dst) })
        .expect(200);
      expect(canceled.body).toMatchObject({ success: true, job_id: first });
      const afterCancel = await eventually(
        async () => {
          const row = await show(dst);
          return row.remote_sync?.status === 'canceled' ? row : undefined;
        },
        10_000,
        'the job canceled on the instance',
      );
      expect(afterCancel.status_msg).toContain('canceled');
      // instance-lifecycle stopped both agents: the transfer's stream ends aborted, never completed
      const firstTransfer = await eventually(
        async () => {
          const events = await history<AgentCopyEvent>(INSTANCE_RUNTIME, `agentcopy-${first}`);
          return events.some((e) => e.type === 'AgentCopyAborted') ? events : undefined;
        },
        10_000,
        'the agents told to stop',
      );
      expect(firstTransfer.map((e) => e.type)).not.toContain('AgentCopyCompleted');
      const partial = await shell.size(destination, '/copied/blob.bin');
      expect(partial).toBeLessThan(BIG);
      // an observation window (not a wait for something): at 1 MB/s a copy still going would add about 1 MB
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await shell.size(destination, '/copied/blob.bin')).toBe(partial);

      // 2. A new start is a new job that copies from the beginning, to the end.
      const second = await startCopy('/data/blob.bin');
      expect(second).not.toBe(first);
      const done = await eventually(
        async () => {
          const row = await show(dst);
          return row.remote_sync?.job_id === second && row.remote_sync.status === 'completed'
            ? row
            : undefined;
        },
        60_000,
        'the second copy complete',
      );
      expect(done.remote_sync?.bytes_copied).toBe(SIZE);
      expect(done.status_msg).toBe(`Remote copy from instance ${src}: complete, 6.3 MB copied`);
      expect(await shell.md5(destination, '/copied/blob.bin')).toBe(sourceMd5);

      const jobs = await history<SyncEvent>(SYNC_RUNTIME, `sync-${dst}`);
      const requested = jobs
        .filter((e) => e.type === 'SyncRequested')
        .map((e) => (e.type === 'SyncRequested' ? e.data.executor : null));
      expect(requested).toEqual(['agents', 'agents']);
      const progressOf = (jobId: number) =>
        jobs.flatMap((e) =>
          e.type === 'SyncProgressed' && e.data.jobId === jobId ? [e.data.bytesCopied] : [],
        );
      expect(progressOf(second)[0]).toBeLessThan(progressOf(first).at(-1)!);
      expect(jobs.filter((e) => e.type === 'SyncCanceled').map((e) => e.data.jobId)).toEqual([first]);

      // 3. Every read model of the contexts involved, rebuilt from the events, equals the live one.
      for (const token of [SYNC_RUNTIME, INSTANCE_RUNTIME]) {
        const mismatches = await eventually(
          async () => {
            const found = await rebuildMismatches(runtime(token));
            return found.length === 0 ? found : undefined;
          },
          30_000,
          'read models equal after rebuild',
        ).catch(() => rebuildMismatches(runtime(token)));
        expect(mismatches).toEqual([]);
      }
    }, 240_000);

    it("fails a copy whose source path does not exist, with the agent's reason on the destination", async () => {
      const [sourceHost, destinationHost] = agents as [HostAgent, HostAgent];
      const instances = await http().get('/api/v0/instances/').set(admin).expect(200);
      const live = instances.body.instances as Array<{ id: number; machine_id: number }>;
      const src = live.find((i) => i.machine_id === sourceHost.machineId)!.id;
      const dst = live.find((i) => i.machine_id === destinationHost.machineId)!.id;
      await http()
        .put('/api/v0/commands/copy_direct/')
        .set(admin)
        .send({ src_id: src, dst_id: dst, src_path: '/no/such/path', dst_path: '/copied/' })
        .expect(200);
      const failed = await eventually(
        async () => {
          const row = await show(dst);
          return row.remote_sync?.status === 'failed' ? row : undefined;
        },
        30_000,
        'the copy failed',
      );
      expect(failed.remote_sync?.msg ?? failed.status_msg).toContain('/no/such/path not found');
    }, 60_000);

    it("clones a volume from one agent's machine onto the other's: the data crosses the channel, show volumes says online", async () => {
      const [sourceHost, destinationHost] = agents as [HostAgent, HostAgent];
      // Volume ids of their own: Docker volumes are named by id (rigmarket-volume-<id>) on the shared engine.
      await h.db.query(
        `ALTER SEQUENCE marketplace.volume_ids RESTART WITH ${randomInt(1_000_000, 2_000_000_000)}`,
      );
      for (const agent of agents)
        await http()
          .post('/api/v0/volumes/')
          .set(admin)
          .send({ size: 20, machine: agent.machineId, price_disk: 0.1, end_date: 4102444800 })
          .expect(200);
      const source = (
        await http()
          .put('/api/v0/volumes/')
          .set(admin)
          .send({ size: 4, id: sourceHost.machineId })
          .expect(200)
      ).body.volume_id as number;
      // The source volume's files, written by a container that mounts it.
      const mounting = async (volumeId: number) => {
        const container = await docker.createContainer({
          Image: IMAGE,
          Cmd: ['sleep', '120'],
          HostConfig: {
            NetworkMode: 'none',
            Mounts: [{ Type: 'volume', Source: `rigmarket-volume-${volumeId}`, Target: '/v' }],
          },
        });
        await container.start();
        return container;
      };
      const writer = await mounting(source);
      await shell.sh(
        writer,
        'mkdir -p /v/a/b && head -c 500000 /dev/urandom > /v/a/b/blob && echo kept > /v/note',
      );
      const md5 = await shell.md5(writer, '/v/a/b/blob');
      await writer.remove({ force: true });

      const answer = await eventually(
        async () => {
          const res = await http()
            .post('/api/v0/volumes/copy/')
            .set(admin)
            .send({ src_id: source, dst_id: destinationHost.machineId });
          return res.status === 200 ? res : undefined;
        },
        30_000,
        'the clone created',
      );
      const clone = answer.body.volume_id as number;
      const row = await eventually(
        async () => {
          const list = (await http().get('/api/v0/volumes').set(admin).expect(200)).body.volumes as Array<{
            id: number;
            status: string;
            status_msg: string | null;
            cloned_from: number | null;
            machine_id: number;
          }>;
          const found = list.find((v) => v.id === clone);
          return found && found.status !== 'cloning' ? found : undefined;
        },
        60_000,
        'the clone copied',
      );
      expect(row).toMatchObject({
        status: 'online',
        status_msg: null,
        cloned_from: source,
        machine_id: destinationHost.machineId,
      });
      const copies = await history<VolumeCopyEvent>(INSTANCE_RUNTIME, `volumecopy-${clone}`);
      expect(copies.map((e) => e.type)).toEqual(['VolumeCopyStarted', 'VolumeCopyCompleted']);
      const reader = await mounting(clone);
      expect(await shell.md5(reader, '/v/a/b/blob')).toBe(md5);
      expect((await shell.sh(reader, 'cat /v/note')).trim()).toBe('kept');
      await reader.remove({ force: true });
      for (const id of [source, clone])
        await docker
          .getVolume(`rigmarket-volume-${id}`)
          .remove()
          .catch(() => undefined);
      for (const token of [MARKETPLACE_RUNTIME, INSTANCE_RUNTIME])
        expect(await settledRebuildMismatches(runtime(token))).toEqual([]);
    }, 120_000);
  },
);
