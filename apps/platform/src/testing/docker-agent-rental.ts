import { randomInt } from 'node:crypto';
import type { Database } from '@rigmarket/event-sourcing';
import { HostAgent, dockerFromEnvironment } from '@rigmarket/host-agent';
import { eventually } from '@rigmarket/testing';
import request from 'supertest';
import type { App } from 'supertest/types';
import { LIST_MACHINE_ASK } from './fixtures';

/**
 * Machine and instance ids of their own for an embedded platform on the shared Docker Engine: container
 * names (rigmarket-instance-<id>) of concurrent runs never meet.
 */
export async function isolateContainerIds(db: Database): Promise<void> {
  await db.query(`ALTER SEQUENCE marketplace.machine_ids RESTART WITH ${randomInt(100_000, 2_000_000)}`);
  await db.query(
    `ALTER SEQUENCE instance_lifecycle.instance_ids RESTART WITH ${randomInt(10_000_000, 2_000_000_000)}`,
  );
}

/**
 * A host agent with the Docker driver and one simulated RTX 4090, for the host's key, its machine listed
 * with LIST_MACHINE_ASK; then the renter rents its GPU (busybox, ssh_direct) and the container runs.
 */
export async function rentOnDockerAgent(options: {
  server: App;
  baseUrl: string;
  hostKey: string;
  renterKey: string;
  stateDir: string;
  image: string;
  log: (line: string) => void;
}): Promise<{ agent: HostAgent; machineId: number; instanceId: number }> {
  const { server, baseUrl, hostKey, renterKey, stateDir, image, log } = options;
  const http = () => request(server);
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const agent = await HostAgent.start({
    apiUrl: baseUrl,
    apiKey: hostKey,
    stateDir,
    driver: 'docker',
    simulateGpus: '1:RTX_4090',
    publicAddress: '127.0.0.1',
    docker: dockerFromEnvironment(),
    log,
  });
  const machineId = agent.machineId;
  await http()
    .put('/api/v0/machines/create_asks/')
    .set(as(hostKey))
    .send({ machine: machineId, ...LIST_MACHINE_ASK })
    .expect(200);
  const rented = await eventually(
    async () => {
      const res = await http()
        .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
        .set(as(renterKey))
        .send({ image, disk: 8, runtype: 'ssh_direct' });
      return res.status === 200 ? res : undefined;
    },
    60_000,
    'the offer in instance-lifecycle',
  );
  const instanceId = rented.body.new_contract as number;
  await eventually(
    async () => {
      const res = await http().get(`/api/v0/instances/${instanceId}/`).set(as(renterKey));
      return res.body.instances?.actual_status === 'running' ? true : undefined;
    },
    90_000,
    'the container running',
  );
  return { agent, machineId, instanceId };
}
