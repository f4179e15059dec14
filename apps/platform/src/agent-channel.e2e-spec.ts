import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { AGENT_CHANNEL_PATH, type AgentToLifecycle, type LifecycleToAgent } from '@rigmarket/contracts';
import { Database } from '@rigmarket/event-sourcing';
import { createPlatformApp } from '@rigmarket/http-kit';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { ed25519PublicKeyLine, eventually } from '@rigmarket/testing';
import request from 'supertest';
import { grantCredit, verifiedUser } from './testing/users';
import WebSocket from 'ws';

/**
 * The agent channel's protocol, spoken by a plain WebSocket client: authentication, machine ownership,
 * commands down, reports and logs up, and the moves to unknown (silence) the agent cannot show by itself.
 */
const ADMIN_KEY = 'admin-channel-key-0123456789';
const sshKey = ed25519PublicKeyLine('agent@test');

const HARDWARE = {
  gpu_name: 'RTX 4090',
  num_gpus: 2,
  gpu_ram: 24564,
  cuda_max_good: 12.4,
  driver_version: '550.54.15',
  cpu_cores: 16,
  cpu_ram: 64000,
  disk_space: 500,
  inet_up: 100,
  inet_down: 100,
  public_ipaddr: '198.51.100.4',
};
const ASK = { price_gpu: 0.4, price_disk: 0.1, price_min_bid: 0.2, end_date: 4102444800.0 };

/** A protocol-level agent: what it received, and a way to wait for a message. */
class RawAgent {
  readonly received: LifecycleToAgent[] = [];
  readonly closed: Promise<number>;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.received.push(JSON.parse(data.toString()) as LifecycleToAgent));
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  }

  static connect(baseUrl: string, key: string | null): Promise<RawAgent | number> {
    const socket = new WebSocket(
      `${baseUrl.replace('http', 'ws')}${AGENT_CHANNEL_PATH}`,
      key ? { headers: { Authorization: `Bearer ${key}` } } : {},
    );
    return new Promise((resolve) => {
      socket.on('open', () => resolve(new RawAgent(socket)));
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    });
  }

  send(message: AgentToLifecycle): void {
    this.socket.send(JSON.stringify(message));
  }

  next<T extends LifecycleToAgent['type']>(
    type: T,
    from = 0,
  ): Promise<Extract<LifecycleToAgent, { type: T }>> {
    return eventually(
      async () =>
        this.received.slice(from).find((m): m is Extract<LifecycleToAgent, { type: T }> => m.type === type),
      30_000,
      `a ${type} message`,
    );
  }
}

describe('the agent channel protocol (embedded)', () => {
  let app: INestApplication;
  let db: Database;
  let baseUrl: string;
  const mailer = new RecordingMailer();
  let hostKey: string;
  let renterKey: string;
  let machineA: number;
  let machineB: number;
  const agents: RawAgent[] = [];
  let stoppedId = 0;
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  const user = (prefix: string) => verifiedUser(app.getHttpServer(), mailer, prefix);

  async function machine(): Promise<number> {
    const id = (await http().post('/api/v0/machines/').set(as(hostKey)).send(HARDWARE).expect(201)).body
      .machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(hostKey))
      .send({ machine: id, ...ASK })
      .expect(200);
    return id;
  }

  async function agentFor(machineId: number, key = hostKey): Promise<RawAgent> {
    const agent = await RawAgent.connect(baseUrl, key);
    if (typeof agent === 'number') throw new Error(`upgrade refused: ${agent}`);
    agents.push(agent);
    agent.send({ type: 'hello', version: 1, machineId, driver: 'raw' });
    return agent;
  }

  const show = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances as Record<
      string,
      unknown
    > | null;
  const until = (id: number, status: string) =>
    eventually(
      async () => {
        const row = await show(id);
        return row?.actual_status === status ? row : undefined;
      },
      30_000,
      `instance ${id} ${status}`,
    );
  const accept = (machineId: number) =>
    eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
          .set(as(renterKey))
          .send({ image: 'busybox', runtype: 'ssh_direct' });
        return res.status === 404 ? undefined : res;
      },
      60_000,
      'the offer in instance-lifecycle',
    );

  async function startApp(): Promise<void> {
    app = await createPlatformApp({
      db,
      transport: new InProcessTransport(),
      modules: [
        IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
        MarketplaceModule.forRoot(),
        InstanceLifecycleModule.forRoot({
          agentChannel: {
            heartbeatIntervalMs: 100,
            heartbeatTimeoutMs: 1_500,
            offlineGraceMs: 300,
            helloWaitMs: 2_000,
          },
        }),
      ],
    });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await startApp();
    hostKey = await user('host');
    renterKey = await user('renter');
    await grantCredit(app.getHttpServer(), ADMIN_KEY, renterKey);
    machineA = await machine();
    machineB = await machine();
  }, 120_000);

  afterAll(async () => {
    for (const agent of agents) agent.socket.terminate();
    await app?.close();
    await db?.close();
  });

  it('refuses an upgrade without a valid key', async () => {
    expect(await RawAgent.connect(baseUrl, null)).toBe(401);
    expect(await RawAgent.connect(baseUrl, 'not-a-key')).toBe(401);
  });

  it("refuses a hello for another owner's machine or an unknown one", async () => {
    const stranger = await agentFor(machineA, renterKey);
    expect(await stranger.next('refused')).toMatchObject({
      reason: expect.stringContaining('not owned by this key'),
    });
    expect(await stranger.closed).toBe(4403);
    const lost = await agentFor(987_654);
    expect(await lost.next('refused')).toMatchObject({ reason: expect.stringContaining('unknown') });
  });

  it('sends commands to the agent of the machine, takes its reports and logs, and marks its instances unknown when it falls silent', async () => {
    const agent = await agentFor(machineA);
    expect(await agent.next('welcome')).toMatchObject({ machineId: machineA, heartbeatIntervalMs: 100 });
    agent.send({ type: 'heartbeat', machineId: machineA });

    const created = await accept(machineA);
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    stoppedId = id;
    const provision = await agent.next('provision');
    expect(provision.spec).toMatchObject({
      instanceId: id,
      machineId: machineA,
      numGpus: 1,
      instanceApiKey: created.body.instance_api_key,
      config: { image: 'busybox', runtype: 'ssh_direct' },
    });
    agent.send({
      type: 'report',
      instanceId: id,
      report: {
        actualStatus: 'running',
        sshHost: '198.51.100.4',
        sshPort: 40022,
        ports: { '22/tcp': 40022 },
        statusMsg: 'up',
      },
    });
    expect(await until(id, 'running')).toMatchObject({ ssh_host: '198.51.100.4', ssh_port: 40022 });

    // another machine's agent cannot report about this instance
    const other = await agentFor(machineB);
    await other.next('welcome');
    other.send({ type: 'report', instanceId: id, report: { actualStatus: 'exited', statusMsg: 'forged' } });

    // logs: the request goes down, the lines come up; tail and filter applied by instance-lifecycle
    const logsAt = agent.received.length;
    // supertest sends on then(): start the request now, answer it below
    const pending = http()
      .put(`/api/v0/instances/request_logs/${id}/`)
      .set(as(renterKey))
      .send({ filter: 'b' })
      .then((response) => response);
    const ask = await agent.next('logs', logsAt);
    expect(ask).toMatchObject({ instanceId: id, daemon: false });
    agent.send({ type: 'logs', requestId: ask.requestId, lines: ['a1', 'b1', 'b2'] });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(
      (
        await http()
          .get(new URL(res.body.result_url as string).pathname)
          .expect(200)
      ).text,
    ).toBe('b1\nb2\n');

    expect((await show(id))?.actual_status).toBe('running'); // the forged report was dropped

    // an attached SSH key goes down as the instance's whole key list
    const keysAt = agent.received.length;
    await http()
      .post(`/api/v0/instances/${id}/ssh/`)
      .set(as(renterKey))
      .send({ ssh_key: sshKey })
      .expect(200);
    expect(await agent.next('ssh_keys', keysAt)).toEqual({
      type: 'ssh_keys',
      instanceId: id,
      commandId: expect.any(Number),
      authorizedKeys: [sshKey],
    });

    const stopAt = agent.received.length;
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    expect(await agent.next('stop', stopAt)).toEqual({
      type: 'stop',
      instanceId: id,
      commandId: expect.any(Number),
    });
    expect((await show(id))?.actual_status).toBe('running'); // until the host says so

    // no heartbeat for longer than heartbeatTimeoutMs: unknown, for good
    const unknown = await until(id, 'unknown');
    expect(unknown.status_msg).toContain('no heartbeat');
    agent.send({ type: 'report', instanceId: id, report: { actualStatus: 'running', sshPort: 40022 } });
    agent.send({ type: 'heartbeat', machineId: machineA });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await show(id))?.actual_status).toBe('unknown');
  });

  it('after a restart of instance-lifecycle, a machine an agent served is never simulated: without its agent, a new instance is offline', async () => {
    for (const agent of agents.splice(0)) agent.socket.terminate();
    await app.close();
    await startApp();
    const created = await accept(machineA);
    expect(created.status).toBe(200);
    const offline = await until(created.body.new_contract as number, 'offline');
    expect(offline.status_msg).toContain('agent is not connected');
    // Its agent, back, is told the desired state of each live instance (ADR 0012) to reconcile with.
    const back = await agentFor(machineA);
    const welcome = await back.next('welcome');
    expect(welcome.desired).toEqual(
      expect.arrayContaining([
        { instanceId: stoppedId, state: 'stopped', authorizedKeys: [sshKey] },
        { instanceId: created.body.new_contract as number, state: 'running', authorizedKeys: [] },
      ]),
    );
  });
});
