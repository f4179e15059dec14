import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import {
  INSTANCE_LABEL,
  containerName,
  labelResolver,
  type ContainerResolver,
} from '@rigmarket/sync-maintenance';
import { eventually } from '@rigmarket/testing';
import Docker from 'dockerode';
import type { App } from 'supertest/types';
import request from 'supertest';
import { grantCredit } from './users';

/**
 * Containers standing in for instances on the test Docker Engine, per the host driver's contract
 * (name rigmarket-instance-<id>, label rigmarket.instance_id=<id>). The engine is shared with other
 * tests and embedded instance ids start at 1, so names carry a suffix and a label unique to the run,
 * which `resolver` also matches.
 */
export class InstanceContainers {
  readonly docker = new Docker();
  readonly tag = `sync-${randomBytes(4).toString('hex')}`;
  private readonly created: Docker.Container[] = [];

  get resolver(): ContainerResolver {
    return labelResolver({ 'rigmarket.test': this.tag });
  }

  async start(instanceId: number): Promise<Docker.Container> {
    const container = await this.docker.createContainer({
      Image: 'rigmarket/busybox:latest',
      name: `${containerName(instanceId)}-${this.tag}`,
      Cmd: ['sleep', '900'],
      Labels: { [INSTANCE_LABEL]: String(instanceId), 'rigmarket.test': this.tag },
      HostConfig: { NetworkMode: 'none' },
    });
    this.created.push(container);
    await container.start();
    return container;
  }

  /** Runs a shell script in a container and returns its stdout. */
  async sh(container: Docker.Container, script: string): Promise<string> {
    return shIn(this.docker, container, script);
  }

  async md5(container: Docker.Container, path: string): Promise<string> {
    return (await this.sh(container, `md5sum ${path}`)).split(/\s+/)[0] ?? '';
  }

  async size(container: Docker.Container, path: string): Promise<number> {
    return Number((await this.sh(container, `wc -c < ${path} 2>/dev/null || echo 0`)) || '0');
  }

  async removeAll(): Promise<void> {
    await Promise.allSettled(this.created.map((c) => c.remove({ force: true })));
  }
}

export interface ContainerPair {
  src: number;
  dst: number;
  source: Docker.Container;
  destination: Docker.Container;
}

/**
 * A 2-GPU machine listed by the admin, two 1-GPU instances rented on it, and their stand-in containers;
 * the source holds `bytes` random bytes at /data/big.bin.
 */
export async function rentContainerPair(
  server: App,
  admin: Record<string, string>,
  containers: InstanceContainers,
  bytes: number,
): Promise<ContainerPair & { machineId: number }> {
  const http = () => request(server);
  const machineId = (
    await http()
      .post('/api/v0/machines/')
      .set(admin)
      .send({
        gpu_name: 'RTX 4090',
        num_gpus: 2,
        gpu_ram: 24564,
        cuda_max_good: 12.4,
        driver_version: '550.54.15',
        cpu_cores: 16,
        cpu_ram: 64000,
        disk_space: 500,
        inet_up: 900,
        inet_down: 900,
      })
      .expect(201)
  ).body.machine_id as number;
  await http()
    .put('/api/v0/machines/create_asks/')
    .set(admin)
    .send({ machine: machineId, price_gpu: 0.5, min_chunk: 1, end_date: 4102444800 })
    .expect(200);
  // Renting needs credit (docs/instances.md, Credit): the admin grants it to itself first.
  const adminKey = (admin.Authorization ?? '').replace(/^Bearer /, '');
  await grantCredit(server, adminKey, adminKey);
  const ids: number[] = [];
  for (let i = 0; i < 2; i += 1) {
    const res = await eventually(
      async () => {
        const r = await http()
          .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
          .set(admin)
          .send({ image: 'rigmarket/busybox', disk: 10 });
        return r.status === 200 ? r : undefined;
      },
      30_000,
      'an instance',
    );
    ids.push(res.body.new_contract as number);
  }
  const [src, dst] = ids as [number, number];
  const source = await containers.start(src);
  const destination = await containers.start(dst);
  await containers.sh(source, `mkdir -p /data && head -c ${bytes} /dev/urandom > /data/big.bin`);
  return { machineId, src, dst, source, destination };
}

/** Runs a shell script in a container (as its user, root for busybox) and returns its stdout, trimmed. */
export async function shIn(docker: Docker, container: Docker.Container, script: string): Promise<string> {
  const exec = await container.exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  docker.modem.demuxStream(stream, out, new PassThrough());
  await new Promise<void>((resolve) => stream.on('end', () => resolve()));
  return Buffer.concat(chunks).toString('utf8').trim();
}
