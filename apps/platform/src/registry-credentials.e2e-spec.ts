import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import {
  AGENT_CHANNEL_PATH,
  type AgentProvisionSpec,
  type AgentToLifecycle,
  type LifecycleToAgent,
} from '@rigmarket/contracts';
import { Database, type OutgoingMessage } from '@rigmarket/event-sourcing';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually } from '@rigmarket/testing';
import request from 'supertest';
import WebSocket from 'ws';
import { createEmbeddedApp } from './platform';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * Registry credentials are secrets (docs/marketplace.md, "Registry credentials"): A's public template
 * with A's private registry password serves A's own instances; B renting with it never receives A's
 * password (agent message, events, outbox/transport, API responses), and B's own image_login is used.
 */
const ADMIN_KEY = 'admin-registry-0123456789';
const A_PASS = 'A-registry-password-7f3c9e';
const B_PASS = 'B-registry-password-41d2aa';

/** Every message published to the transport (what Kafka would carry in distributed mode). */
class RecordingTransport extends InProcessTransport {
  readonly published: OutgoingMessage[] = [];
  override publish(messages: readonly OutgoingMessage[]): Promise<void> {
    this.published.push(...messages);
    return super.publish(messages);
  }
}

describe('registry credentials of templates', () => {
  let app: INestApplication;
  let db: Database;
  let baseUrl: string;
  let socket: WebSocket;
  const transport = new RecordingTransport();
  const mailer = new RecordingMailer();
  const received: LifecycleToAgent[] = [];
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let hostKey: string;
  let aKey: string;
  let bKey: string;
  let machineId: number;
  let hashId: string;

  const provisionOf = (instanceId: number): Promise<AgentProvisionSpec> =>
    eventually(
      async () => {
        for (const m of received)
          if (m.type === 'provision' && m.spec.instanceId === instanceId) return m.spec;
        return undefined;
      },
      30_000,
      `the provision of ${instanceId}`,
    );

  const rent = (key: string, body: Record<string, unknown>) =>
    eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
          .set(as(key))
          .send({ template_hash_id: hashId, ...body });
        return res.status === 404 ? undefined : res;
      },
      60_000,
      'the offer and template in instance-lifecycle',
    );

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport,
      identity: { adminKey: ADMIN_KEY, mailer },
    });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    hostKey = await verifiedUser(app.getHttpServer(), mailer, 'host');
    aKey = await verifiedUser(app.getHttpServer(), mailer, 'alice');
    bKey = await verifiedUser(app.getHttpServer(), mailer, 'bob');
    await grantCredit(app.getHttpServer(), ADMIN_KEY, aKey);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, bKey);
    machineId = (
      await http()
        .post('/api/v0/machines/')
        .set(as(hostKey))
        .send({
          gpu_name: 'RTX 4090',
          num_gpus: 4,
          gpu_ram: 24564,
          cuda_max_good: 12.4,
          driver_version: '550.54.15',
          cpu_cores: 16,
          cpu_ram: 64000,
          disk_space: 500,
          inet_up: 100,
          inet_down: 100,
          public_ipaddr: '198.51.100.4',
        })
        .expect(201)
    ).body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(hostKey))
      .send({ machine: machineId, price_gpu: 0.4, price_disk: 0.1, price_min_bid: 0.2, end_date: 4102444800 })
      .expect(200);
    socket = new WebSocket(`${baseUrl.replace('http', 'ws')}${AGENT_CHANNEL_PATH}`, {
      headers: as(hostKey),
    });
    socket.on('message', (data) => received.push(JSON.parse(data.toString()) as LifecycleToAgent));
    await new Promise((resolve) => socket.on('open', resolve));
    const hello: AgentToLifecycle = { type: 'hello', version: 1, machineId, driver: 'raw' };
    socket.send(JSON.stringify(hello));
    await eventually(async () => received.find((m) => m.type === 'welcome'), 30_000, 'welcome');

    const created = await http()
      .post('/api/v0/template/')
      .set(as(aKey))
      .send({
        name: 'private-registry',
        image: 'registry.example.com/alice/app',
        tag: 'v1',
        runtype: 'ssh',
        docker_login_repo: 'registry.example.com',
        docker_login_user: 'alice',
        docker_login_pass: A_PASS,
        private: false,
      })
      .expect(200);
    hashId = created.body.template.hash_id as string;
    // The creator still sees (and can edit) their own password; nobody else does.
    expect(created.body.template.docker_login_pass).toBe(A_PASS);
  }, 180_000);

  afterAll(async () => {
    socket?.terminate();
    await app?.close();
    await db?.close();
  });

  it("gives A's instance A's credentials, B's instance none of them (or B's own), and stores or publishes none in the clear", async () => {
    const forA = await rent(aKey, {});
    expect(forA.status).toBe(200);
    expect((await provisionOf(forA.body.new_contract as number)).config.imageLogin).toBe(
      `-u alice -p ${A_PASS} registry.example.com`,
    );

    const forB = await rent(bKey, {});
    expect(forB.status).toBe(200);
    const bSpec = await provisionOf(forB.body.new_contract as number);
    expect(bSpec.config.image).toBe('registry.example.com/alice/app:v1');
    expect(bSpec.config.imageLogin).toBeNull();
    expect(JSON.stringify(bSpec)).not.toContain(A_PASS);

    const own = `-u bob -p ${B_PASS} registry.example.com`;
    const forBOwn = await rent(bKey, { image_login: own });
    expect(forBOwn.status).toBe(200);
    expect((await provisionOf(forBOwn.body.new_contract as number)).config.imageLogin).toBe(own);

    // API responses: B's instances, B's template search, A's instances.
    const responses = [
      await http().get('/api/v0/instances/').set(as(bKey)).expect(200),
      await http().get(`/api/v0/instances/${forB.body.new_contract}/`).set(as(bKey)).expect(200),
      await http().get('/api/v0/template/').set(as(bKey)).query({ select_filters: '{}' }),
      await http().get('/api/v0/instances/').set(as(aKey)).expect(200),
    ];
    for (const res of responses) {
      expect(JSON.stringify(res.body)).not.toContain(A_PASS);
      expect(JSON.stringify(res.body)).not.toContain(B_PASS);
    }
    // Events, outbox, read models at rest and what the transport (Kafka) carried: neither password in the clear.
    const stored: string[] = [];
    for (const schema of ['marketplace', 'instance_lifecycle', 'identity']) {
      for (const table of ['events', 'outbox']) {
        const rows = await db.query<{ row: string }>(`SELECT t::text AS row FROM ${schema}.${table} t`);
        stored.push(...rows.map((r) => r.row));
      }
    }
    stored.push(
      ...(await db.query<{ row: string }>(`SELECT t::text AS row FROM marketplace.templates t`)).map(
        (r) => r.row,
      ),
      ...(await db.query<{ row: string }>(`SELECT t::text AS row FROM instance_lifecycle.instances t`)).map(
        (r) => r.row,
      ),
      ...(
        await db.query<{ row: string }>(`SELECT t::text AS row FROM instance_lifecycle.market_templates t`)
      ).map((r) => r.row),
    );
    expect(stored.some((row) => row.includes('registry.example.com'))).toBe(true);
    const published = transport.published.map((m) => JSON.stringify(m));
    expect(published.some((m) => m.includes('InstanceCreated'))).toBe(true);
    for (const text of [...stored, ...published]) {
      expect(text).not.toContain(A_PASS);
      expect(text).not.toContain(B_PASS);
    }
  }, 120_000);
});
