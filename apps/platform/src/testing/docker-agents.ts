import { randomInt } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@rigmarket/event-sourcing';
import { HostAgent, dockerFromEnvironment } from '@rigmarket/host-agent';
import { eventually } from '@rigmarket/testing';
import type Docker from 'dockerode';
import request from 'supertest';
import type { App } from 'supertest/types';
import { LIST_MACHINE_ASK } from './fixtures';

/**
 * Moves the embedded platform's machine, instance and volume ids to a random range, so that suites sharing
 * the Docker Engine at once never meet: containers and volumes are named by those ids.
 */
export async function separateDockerIds(db: Database): Promise<void> {
  await db.query(`ALTER SEQUENCE marketplace.machine_ids RESTART WITH ${randomInt(100_000, 2_000_000)}`);
  await db.query(
    `ALTER SEQUENCE instance_lifecycle.instance_ids RESTART WITH ${randomInt(10_000_000, 2_000_000_000)}`,
  );
  await db.query(`ALTER SEQUENCE marketplace.volume_ids RESTART WITH ${randomInt(1_000_000, 2_000_000_000)}`);
}

export interface DockerAgentOptions {
  /** The platform's base URL (http://127.0.0.1:PORT). */
  baseUrl: string;
  /** The host's key: the agent registers its machine with it and the machine is listed with it. */
  hostKey: string;
  docker: Docker;
  /** `simulateGpus` of the agent: a count, or count:model (default one GPU). */
  gpus?: string;
  /** The listing (`vastai list machine`'s body without the machine); default $0.50 per GPU-hour until 2100. */
  ask?: Record<string, unknown>;
  log?: (line: string) => void;
  /** The agent's state folder (default: a new one under the system's temporary folder). */
  stateDir?: string;
}

export interface ListedDockerAgent {
  agent: HostAgent;
  machineId: number;
  /** The agent's state folder (its machine id and keys): the caller removes it. */
  stateDir: string;
}

/**
 * A host agent with the Docker driver (real containers on the local engine, simulated GPUs) that registered
 * its machine with the platform, and that machine listed: what a host does before its machine can be rented.
 */
export async function startListedDockerAgent(options: DockerAgentOptions): Promise<ListedDockerAgent> {
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'rigmarket-docker-agent-')));
  const agent = await HostAgent.start({
    apiUrl: options.baseUrl,
    apiKey: options.hostKey,
    stateDir,
    driver: 'docker',
    simulateGpus: options.gpus ?? '1',
    publicAddress: '127.0.0.1',
    docker: options.docker,
    log: options.log ?? (() => undefined),
  });
  await request(options.baseUrl)
    .put('/api/v0/machines/create_asks/')
    .set({ Authorization: `Bearer ${options.hostKey}` })
    .send({
      machine: agent.machineId,
      ...(options.ask ?? { price_gpu: 0.5, min_chunk: 1, end_date: 4102444800 }),
    })
    .expect(200);
  return { agent, machineId: agent.machineId, stateDir };
}

/**
 * A host agent with the Docker driver and one simulated RTX 4090, for the host's key, its machine listed
 * with LIST_MACHINE_ASK; then the renter rents its GPU (`image`, ssh_direct) and the container runs.
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
  const { agent, machineId } = await startListedDockerAgent({
    baseUrl,
    hostKey,
    docker: dockerFromEnvironment(),
    gpus: '1:RTX_4090',
    ask: LIST_MACHINE_ASK,
    log,
    stateDir,
  });
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
