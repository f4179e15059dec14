import type { AddressInfo } from 'node:net';
import type {
  AgentHostReport,
  AgentProvisionSpec,
  AgentToLifecycle,
  LifecycleToAgent,
} from '@rigmarket/contracts';
import { eventually, instanceConfig } from '@rigmarket/testing';
import { type WebSocket, WebSocketServer } from 'ws';
import { DaemonLog } from '../drivers/agent-driver';
import { SimulatedAgentDriver } from '../drivers/simulated.driver';
import { ChannelClient } from './channel-client';

/**
 * The agent's side of ADR 0012 over a real socket: a host command delivered twice (at least once) runs
 * once, and the welcome's desired states bring the host's instances to them.
 */
const spec = (instanceId: number): AgentProvisionSpec => ({
  instanceId,
  machineId: 9,
  publicIpaddr: null,
  numGpus: 1,
  targetState: 'running',
  instanceApiKey: 'k',
  config: instanceConfig(),
});

describe('host agent channel client: at-least-once commands and desired state', () => {
  let server: WebSocketServer;
  let socket: WebSocket | undefined;
  let client: ChannelClient;
  const received: AgentToLifecycle[] = [];
  const daemonLog = new DaemonLog();
  const driver = new SimulatedAgentDriver({ sshHost: 'h', daemonLog, bootMs: 20 });
  const reports = (id: number) =>
    received
      .filter(
        (m): m is Extract<AgentToLifecycle, { type: 'report' }> => m.type === 'report' && m.instanceId === id,
      )
      .map((m) => m.report.actualStatus);
  const down = (message: LifecycleToAgent) => socket!.send(JSON.stringify(message));
  const welcome = (
    desired: Array<{ instanceId: number; state: 'running' | 'stopped'; authorizedKeys?: string[] }>,
  ): LifecycleToAgent => ({
    type: 'welcome',
    version: 1,
    machineId: 9,
    heartbeatIntervalMs: 60_000,
    liveInstanceIds: desired.map((d) => d.instanceId),
    desired,
  });

  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    server.on('connection', (ws) => {
      socket = ws;
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as AgentToLifecycle;
        received.push(message);
        if (message.type === 'hello') ws.send(JSON.stringify(welcome([])));
      });
    });
    await new Promise((resolve) => server.once('listening', resolve));
    await driver.watch((instanceId, report: AgentHostReport) => client.report(instanceId, report));
    client = new ChannelClient({
      channelUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'key',
      machineId: 9,
      driver,
      log: () => undefined,
    });
    await client.open();
  });

  afterAll(async () => {
    await client.close();
    await driver.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('runs a redelivered command once, and skips an older command id of the same instance', async () => {
    down({ type: 'provision', commandId: 5, spec: spec(1) });
    down({ type: 'provision', commandId: 5, spec: spec(1) });
    await eventually(async () => (reports(1).includes('running') ? true : undefined), 5_000, 'running');
    down({ type: 'stop', commandId: 4, instanceId: 1 });
    down({ type: 'stop', commandId: 6, instanceId: 1 });
    down({ type: 'stop', commandId: 6, instanceId: 1 });
    await eventually(async () => (reports(1).includes('stopped') ? true : undefined), 5_000, 'stopped');
    await new Promise((r) => setTimeout(r, 200));
    expect(daemonLog.of(1).filter((l) => l.includes('simulated provision')).length).toBe(1);
    expect(reports(1)).toEqual(['loading', 'running', 'stopped']);
  });

  it('on a (re)connect, brings each instance to the desired state the welcome names', async () => {
    const before = reports(1).length;
    down(welcome([{ instanceId: 1, state: 'running' }]));
    await eventually(
      async () => (reports(1).slice(before).includes('running') ? true : undefined),
      5_000,
      'running again from the desired state',
    );
  });

  it("hands the instance's authorized keys to the driver from ssh_keys commands and from the welcome", async () => {
    const keysLines = () => daemonLog.of(1).filter((l) => l.includes('authorized_keys'));
    down({ type: 'ssh_keys', commandId: 20, instanceId: 1, authorizedKeys: ['ssh-ed25519 AAAA a@b'] });
    down({ type: 'ssh_keys', commandId: 20, instanceId: 1, authorizedKeys: ['ssh-ed25519 AAAA a@b'] });
    await eventually(async () => (keysLines().length === 1 ? true : undefined), 5_000, 'the keys');
    expect(keysLines()[0]).toContain('authorized_keys: 1 key(s): ssh-ed25519 a@b');
    down(welcome([{ instanceId: 1, state: 'running', authorizedKeys: ['ssh-ed25519 BBBB c@d'] }]));
    await eventually(
      async () => (keysLines().at(-1)?.includes('1 key(s): ssh-ed25519 c@d') ? true : undefined),
      5_000,
      'the keys from the welcome',
    );
    down(welcome([{ instanceId: 1, state: 'running', authorizedKeys: [] }]));
    down({ type: 'ssh_keys', commandId: 21, instanceId: 1, authorizedKeys: [] });
    await eventually(
      async () => (keysLines().at(-1)?.includes('authorized_keys: 0 key(s)') ? true : undefined),
      5_000,
      'no keys from ssh_keys',
    );
    // the empty list of the welcome changed nothing; the command did
    expect(keysLines()).toHaveLength(3);
  });

  it('answers a snapshot with its outcome: the driver refusing it, or the time limit passing first', async () => {
    const outcome = (id: number) =>
      eventually(
        async () =>
          received.find(
            (m): m is Extract<AgentToLifecycle, { type: 'snapshot_report' }> =>
              m.type === 'snapshot_report' && m.instanceId === id,
          ),
        5_000,
        `the snapshot report of ${id}`,
      );
    const request = (instanceId: number, timeLimitMs: number) => ({
      instanceId,
      snapshotId: 1,
      image: '127.0.0.1:5000/a/b:v1',
      pause: true,
      auth: { username: 'u', password: 'p', serveraddress: '127.0.0.1:5000' },
      timeLimitMs,
    });
    down({ type: 'snapshot', commandId: 30, instanceId: 1, snapshot: request(1, 60_000) });
    expect(await outcome(1)).toMatchObject({
      snapshotId: 1,
      digest: null,
      error: expect.stringContaining('no container to commit'),
    });

    // A driver whose push never ends: the agent gives up at the time limit and says so.
    class StuckDriver extends SimulatedAgentDriver {
      override snapshot(_request: unknown, signal: AbortSignal): Promise<never> {
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      }
    }
    const stuck = new ChannelClient({
      channelUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'key',
      machineId: 9,
      driver: new StuckDriver({ sshHost: 'h', daemonLog }),
      log: () => undefined,
    });
    await stuck.open();
    try {
      down({ type: 'snapshot', commandId: 31, instanceId: 2, snapshot: request(2, 300) });
      expect(await outcome(2)).toMatchObject({
        digest: null,
        error: 'the host gave up after the time limit of 1 s',
      });
    } finally {
      await stuck.close();
    }
  });
});
