import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { type HostAgent, containerName, dockerFromEnvironment } from '@rigmarket/host-agent';
import { InProcessTransport } from '@rigmarket/messaging';
import { UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import { eventually } from '@rigmarket/testing';
import request from 'supertest';
import { separateDockerIds, startListedDockerAgent } from './testing/docker-agents';
import { removeMachineContainers } from './testing/machine-containers';
import { createEmbeddedApp } from './platform';
import { InstanceContainers } from './testing/instance-containers';
import { grantCredit } from './testing/users';

/**
 * `vastai copy` between two instances of one host agent (one machine): the job is left to the agents
 * (docs/adr/0011-agent-copies.md), and the one agent is both the source and the destination of the relay.
 * sync-maintenance's own executor here is the one that cannot copy, so the copy can only be the agent's.
 * Two agents on two machines: sync-across-host-agents.e2e-spec.ts.
 */
const ADMIN_KEY = 'agent-sync-admin-key-0123456789';
const IMAGE = 'rigmarket/busybox:latest';

describe('a remote copy between two instances run by a host agent with the Docker driver', () => {
  const docker = dockerFromEnvironment();
  const shell = new InstanceContainers();
  let app: INestApplication;
  let db: Database;
  let agent: HostAgent | undefined;
  let stateDir: string | undefined;
  let machineId: number | undefined;
  const http = () => request(app.getHttpServer());
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
  const show = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/`).set(admin).expect(200)).body.instances as {
      actual_status: string | null;
      remote_sync: { status: string } | null;
    } | null;

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY },
      sync: { copyExecutor: new UnavailableCopyExecutor() },
    });
    await app.listen(0, '127.0.0.1');
    await separateDockerIds(db);
    await eventually(
      async () => ((await http().get('/api/v0/machines').set(admin)).status === 200 ? true : undefined),
      60_000,
      'the admin key',
    );
    const { port } = app.getHttpServer().address() as AddressInfo;
    ({ agent, machineId, stateDir } = await startListedDockerAgent({
      baseUrl: `http://127.0.0.1:${port}`,
      hostKey: ADMIN_KEY,
      docker,
      gpus: '2',
    }));
    // The admin rents here: renting needs credit.
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    if (machineId !== undefined) {
      await removeMachineContainers(docker, machineId);
    }
    await app?.close();
    await db?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('copies a file the source instance wrote into the destination instance, through its agent', async () => {
    const rent = (onstart: string) =>
      eventually(
        async () => {
          const res = await http()
            .put(`/api/v0/asks/${machineId! * 1000 + 1}/`)
            .set(admin)
            .send({ image: IMAGE, runtype: 'ssh', onstart });
          return res.status === 200 ? (res.body.new_contract as number) : undefined;
        },
        60_000,
        'an instance',
      );
    const src = await rent('mkdir -p /data && echo payload-from-src > /data/hello.txt');
    const dst = await rent('');
    for (const id of [src, dst])
      await eventually(
        async () => ((await show(id))?.actual_status === 'running' ? true : undefined),
        60_000,
        `instance ${id} running`,
      );
    const source = docker.getContainer(containerName(src));
    await eventually(
      async () =>
        (await shell.sh(source, 'cat /data/hello.txt 2>/dev/null')).includes('payload-from-src')
          ? true
          : undefined,
      30_000,
      'the file in the source',
    );

    await eventually(
      async () => {
        const res = await http()
          .put('/api/v0/commands/copy_direct/')
          .set(admin)
          .send({
            client_id: 'me',
            src_id: String(src),
            dst_id: String(dst),
            src_path: '/data/hello.txt',
            dst_path: '/data/',
          });
        return res.status === 200 ? true : undefined;
      },
      30_000,
      'the instances in sync-maintenance',
    );
    await eventually(
      async () => ((await show(dst))?.remote_sync?.status === 'completed' ? true : undefined),
      60_000,
      'the copy completed',
    );
    expect(await shell.sh(docker.getContainer(containerName(dst)), 'cat /data/hello.txt')).toContain(
      'payload-from-src',
    );

    for (const id of [src, dst])
      await http().delete(`/api/v0/instances/${id}/`).set(admin).send({}).expect(200);
  });
});
