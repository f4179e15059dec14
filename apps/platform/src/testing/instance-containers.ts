import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { INSTANCE_LABEL, containerName, labelResolver, type ContainerResolver } from '@rigmarket/sync-maintenance';
import Docker from 'dockerode';

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
    const exec = await container.exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    this.docker.modem.demuxStream(stream, out, new PassThrough());
    await new Promise<void>((resolve) => stream.on('end', () => resolve()));
    return Buffer.concat(chunks).toString('utf8').trim();
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
