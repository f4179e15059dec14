import { PassThrough, type Readable, type Writable } from 'node:stream';
import { prepareDestination, prepareSource } from '@rigmarket/container-copy';
import {
  type AgentHostReport,
  type AgentProvisionSpec,
  type AgentSnapshotRequest,
  authorizedKeysSummary,
} from '@rigmarket/contracts';
import type Docker from 'dockerode';
import { changedFilesTar } from './changed-files-tar';
import { type AgentDriver, type DaemonLog, type ReportTransition, STOPPED_MSG } from './agent-driver';
import { writeAuthorizedKeys } from './authorized-keys';
import { execInContainer } from './container-exec';
import {
  GPUS_LABEL,
  INSTANCE_LABEL,
  MACHINE_LABEL,
  containerName,
  containerPlan,
  demuxDockerLog,
  pickGpus,
  publishedPorts,
  registryAuth,
  storageHonoursDiskSize,
} from './container-spec';
import { readVolumeArchive, writeVolumeArchive } from './volume-archive';

export interface DockerDriverOptions {
  machineId: number;
  /** ssh_host reported for the instances (the machine's public address). */
  sshHost: string;
  /** Real GPU device indices (nvidia-smi); null on a host without real GPUs. */
  gpuDeviceIds: string[] | null;
  daemonLog: DaemonLog;
  /** Seconds docker stop waits before SIGKILL. */
  stopTimeoutS?: number;
  /** Where the driver's own failures go (the agent's log). */
  onError?: (line: string) => void;
}

/** What the agent asked of a container last; a `die` event is read against it. */
type Intent = 'run' | 'stop' | 'reboot' | 'recycle' | 'destroy';

interface DockerEvent {
  Type?: string;
  Action?: string;
  status?: string;
  Actor?: { Attributes?: Record<string, string> };
}

const statusCode = (error: unknown): number | undefined =>
  (error as { statusCode?: number } | null)?.statusCode;

/**
 * Instances as Docker containers (dockerode over the Engine API). Every report comes from Docker itself:
 * its event stream (start, die) read against what the agent asked, and container inspect for the ports.
 */
export class DockerDriver implements AgentDriver {
  readonly name = 'docker';
  private report: ReportTransition = () => undefined;
  private events: Readable | undefined;
  private diskQuota = false;
  private readonly intents = new Map<number, Intent>();
  private readonly stopMessages = new Map<number, string>();
  /** Each instance's authorized keys as the platform last said (written at each container start). */
  private readonly authorizedKeys = new Map<number, string[]>();
  private readonly keyWrites = new Map<number, Promise<void>>();
  /** Instances provisioned since this agent started (never taken for leftovers). */
  private readonly provisioned = new Set<number>();
  private closed = false;

  constructor(
    private readonly docker: Docker,
    private readonly options: DockerDriverOptions,
  ) {}

  private get log(): DaemonLog {
    return this.options.daemonLog;
  }

  async watch(report: ReportTransition): Promise<void> {
    this.report = report;
    const info = (await this.docker.info()) as { Driver?: string; DriverStatus?: Array<[string, string]> };
    this.diskQuota = storageHonoursDiskSize(info.Driver ?? '', info.DriverStatus ?? []);
    await this.followEvents();
    await this.reconcile();
  }

  /** Docker's event stream for this machine's containers; followed again (and reconciled) if it ends, e.g. a dockerd restart. */
  private async followEvents(): Promise<void> {
    const stream = (await this.docker.getEvents({
      filters: { type: ['container'], label: [`${MACHINE_LABEL}=${this.options.machineId}`] },
    })) as unknown as Readable;
    this.events = stream;
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        let event: DockerEvent;
        try {
          event = JSON.parse(line) as DockerEvent;
        } catch {
          continue;
        }
        this.onEvent(event).catch((error: unknown) =>
          this.options.onError?.(`docker event handling failed: ${message(error)}`),
        );
      }
    });
    let resumed = false;
    const resume = () => {
      if (resumed || this.closed) return;
      resumed = true;
      this.options.onError?.('docker event stream ended; following it again');
      const retry = () =>
        void this.followEvents()
          .then(() => this.reconcile())
          .catch(() => {
            if (!this.closed) setTimeout(retry, 2_000).unref();
          });
      setTimeout(retry, 1_000).unref();
    };
    stream.on('error', resume);
    stream.on('end', resume);
    stream.on('close', resume);
  }

  /** After an agent restart: containers already running are reported as running again. */
  private async reconcile(): Promise<void> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${MACHINE_LABEL}=${this.options.machineId}`] },
    });
    for (const c of containers) {
      const instanceId = Number(c.Labels[INSTANCE_LABEL]);
      if (!Number.isInteger(instanceId)) continue;
      if (c.State === 'running') {
        this.intents.set(instanceId, 'run');
        await this.reportRunning(instanceId);
      }
    }
  }

  async provision(spec: AgentProvisionSpec): Promise<void> {
    const id = spec.instanceId;
    this.provisioned.add(id);
    // A container whose instance never had keys is left as its image made it (no exec at its starts).
    if (spec.authorizedKeys?.length) this.authorizedKeys.set(id, spec.authorizedKeys);
    this.intents.set(id, spec.targetState === 'running' ? 'run' : 'stop');
    this.log.line(id, `provision ${spec.config.image} (${spec.config.runtype}, ${spec.numGpus} GPU)`);
    this.send(id, { actualStatus: 'loading', statusMsg: `Pulling image ${spec.config.image}` });
    try {
      await this.ensureImage(id, spec.config.image, spec.config.imageLogin);
      const gpuDeviceIds = await this.gpusFor(spec.numGpus);
      if (!this.diskQuota)
        this.log.line(
          id,
          `disk size ${spec.config.disk} GB not enforced: the storage driver has no per-container quota`,
        );
      await this.removeContainer(id); // a leftover of an earlier attempt
      await this.create(spec, gpuDeviceIds);
    } catch (error) {
      this.fail(id, `Provisioning failed: ${message(error)}`);
    }
  }

  /** The container of spec, started when it is meant to run. */
  private async create(spec: AgentProvisionSpec, gpuDeviceIds: string[] | null): Promise<void> {
    const id = spec.instanceId;
    const { name, ...options } = containerPlan(spec, { gpuDeviceIds, diskQuota: this.diskQuota });
    const container = await this.docker.createContainer({ name, ...options });
    this.log.line(id, `created container ${name} (${container.id.slice(0, 12)})`);
    this.intents.set(id, spec.targetState === 'running' ? 'run' : 'stop');
    if (spec.targetState === 'running') {
      await container.start();
      this.log.line(id, 'started container');
    } else {
      this.send(id, { actualStatus: 'stopped', statusMsg: 'Created; not started (target_state stopped)' });
    }
  }

  /**
   * `vastai update instance`: a new container from the changed spec in place of the old one, with the old
   * one's GPUs and instance key (CONTAINER_API_KEY); volume mounts follow the spec (the same volume). What
   * the old container wrote outside a volume is gone, as with recycle.
   */
  async update(spec: AgentProvisionSpec): Promise<void> {
    const id = spec.instanceId;
    const old = await this.container(id);
    if (!old) return this.provision(spec);
    const info = await old.inspect();
    const keyVar = 'CONTAINER_API_KEY=';
    const key = (info.Config.Env ?? []).find((e) => e.startsWith(keyVar))?.slice(keyVar.length);
    const heldGpus = (info.Config.Labels?.[GPUS_LABEL] ?? '').split(',').filter(Boolean);
    this.intents.set(id, 'recycle');
    this.log.line(id, `update: recreate container from ${spec.config.image}`);
    this.send(id, {
      actualStatus: 'loading',
      sshHost: null,
      sshPort: null,
      ports: {},
      statusMsg: `Updating: pulling image ${spec.config.image}`,
    });
    try {
      await this.ensureImage(id, spec.config.image, spec.config.imageLogin);
      await this.removeContainer(id);
      // The GPUs it held (none on a host without real GPUs: gpusFor answers null there).
      const gpuDeviceIds = heldGpus.length > 0 ? heldGpus : await this.gpusFor(spec.numGpus);
      await this.create({ ...spec, instanceApiKey: key ?? spec.instanceApiKey }, gpuDeviceIds);
    } catch (error) {
      this.fail(id, `Update failed: ${message(error)}`);
    }
  }

  async start(instanceId: number): Promise<void> {
    this.intents.set(instanceId, 'run');
    this.log.line(instanceId, 'start container');
    await this.act(instanceId, (c) => c.start(), [304]);
  }

  async stop(instanceId: number, statusMsg?: string): Promise<void> {
    this.intents.set(instanceId, 'stop');
    if (statusMsg) this.stopMessages.set(instanceId, statusMsg);
    this.log.line(instanceId, `stop container${statusMsg ? ` (${statusMsg})` : ''}`);
    const container = await this.container(instanceId);
    if (!container) return;
    const state = await container.inspect().then(
      (i) => i.State,
      () => null,
    );
    // Already down: no die event will come, so the inspected state is the report.
    if (state && !state.Running)
      return this.send(instanceId, {
        actualStatus: 'stopped',
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: this.takeStopMessage(instanceId),
      });
    await this.act(instanceId, (c) => c.stop({ t: this.options.stopTimeoutS ?? 10 }), [304]);
  }

  async reboot(instanceId: number): Promise<void> {
    this.intents.set(instanceId, 'reboot');
    this.log.line(instanceId, 'reboot: restart container');
    this.send(instanceId, {
      actualStatus: 'loading',
      sshHost: null,
      sshPort: null,
      ports: {},
      statusMsg: 'Rebooting',
    });
    await this.act(instanceId, (c) => c.restart({ t: this.options.stopTimeoutS ?? 10 }));
  }

  /** Recreates the container from the same settings after a fresh pull (when a registry is reachable). */
  async recycle(instanceId: number): Promise<void> {
    const container = await this.container(instanceId);
    if (!container) return;
    this.intents.set(instanceId, 'recycle');
    const info = await container.inspect();
    this.log.line(instanceId, `recycle: recreate container from ${info.Config.Image}`);
    this.send(instanceId, {
      actualStatus: 'loading',
      sshHost: null,
      sshPort: null,
      ports: {},
      statusMsg: `Recycling: pulling image ${info.Config.Image}`,
    });
    try {
      await this.pull(instanceId, info.Config.Image, null).catch((error: unknown) =>
        this.log.line(instanceId, `fresh pull failed, keeping the local image: ${message(error)}`),
      );
      await container.remove({ force: true });
      const fresh = await this.docker.createContainer({
        name: containerName(instanceId),
        Image: info.Config.Image,
        Env: info.Config.Env,
        Entrypoint: info.Config.Entrypoint ?? undefined,
        Cmd: info.Config.Cmd ?? undefined,
        Hostname: info.Config.Hostname,
        Labels: info.Config.Labels,
        ExposedPorts: info.Config.ExposedPorts,
        Tty: false,
        HostConfig: {
          PortBindings: info.HostConfig.PortBindings,
          DeviceRequests: info.HostConfig.DeviceRequests,
          StorageOpt: info.HostConfig.StorageOpt,
          Mounts: info.HostConfig.Mounts,
          RestartPolicy: { Name: 'no' },
        },
      });
      this.intents.set(instanceId, 'run');
      await fresh.start();
    } catch (error) {
      this.fail(instanceId, `Recycle failed: ${message(error)}`);
    }
  }

  async destroy(instanceId: number): Promise<void> {
    this.intents.set(instanceId, 'destroy');
    this.log.line(instanceId, 'destroy: remove container');
    await this.removeContainer(instanceId);
    this.intents.delete(instanceId);
    this.stopMessages.delete(instanceId);
    this.provisioned.delete(instanceId);
    this.authorizedKeys.delete(instanceId);
  }

  async setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): Promise<void> {
    this.authorizedKeys.set(instanceId, authorizedKeys);
    const container = this.docker.getContainer(containerName(instanceId));
    const running = await container.inspect().then(
      (i) => Boolean(i.State?.Running),
      () => false,
    );
    // A container that is not running gets them at its next start (the start event).
    if (running) await this.writeKeys(instanceId, container);
  }

  /**
   * Writes the instance's keys into its container; a failure is the renter's to read in the daemon log.
   * One write at a time per instance, each with the list as it is when its turn comes (a start event and a
   * change may ask at once), so the last write holds the latest list.
   */
  private writeKeys(instanceId: number, container: Docker.Container): Promise<void> {
    const write = async () => {
      const keys = this.authorizedKeys.get(instanceId);
      if (!keys) return;
      await writeAuthorizedKeys(container, keys).then(
        () => this.log.line(instanceId, authorizedKeysSummary(keys)),
        (error: unknown) => this.log.line(instanceId, `authorized_keys not written: ${message(error)}`),
      );
    };
    const next = (this.keyWrites.get(instanceId) ?? Promise.resolve()).then(write);
    this.keyWrites.set(instanceId, next);
    void next.then(() => {
      if (this.keyWrites.get(instanceId) === next) this.keyWrites.delete(instanceId);
    });
    return next;
  }

  async converge(instanceId: number, desired: 'running' | 'stopped'): Promise<void> {
    const container = await this.container(instanceId);
    if (!container) return;
    const running = await container.inspect().then(
      (i) => Boolean(i.State?.Running),
      () => null,
    );
    if (running === null) return;
    if (desired === 'running') {
      if (running) return this.reportRunning(instanceId);
      this.log.line(instanceId, 'reconnect: meant to be running, starting it');
      return this.start(instanceId);
    }
    this.log.line(instanceId, `reconnect: meant to be stopped${running ? ', stopping it' : ''}`);
    return this.stop(instanceId);
  }

  /** Containers of this machine whose instance is gone (and that this agent did not just provision) are removed. */
  async forgetAllBut(liveInstanceIds: number[]): Promise<void> {
    const live = new Set(liveInstanceIds);
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${MACHINE_LABEL}=${this.options.machineId}`] },
    });
    for (const c of containers) {
      const instanceId = Number(c.Labels[INSTANCE_LABEL]);
      if (!Number.isInteger(instanceId) || live.has(instanceId) || this.provisioned.has(instanceId)) continue;
      this.log.line(instanceId, 'the instance was destroyed while the agent was away: remove its container');
      await this.removeContainer(instanceId);
    }
  }

  async logs(instanceId: number, daemon: boolean): Promise<string[]> {
    if (daemon) return this.log.of(instanceId);
    const container = await this.container(instanceId);
    if (!container) return [];
    const raw = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    return demuxDockerLog(Buffer.from(raw))
      .split('\n')
      .filter((line, i, all) => line.length > 0 || i < all.length - 1);
  }

  async exec(instanceId: number, argv: string[]): Promise<string> {
    const container = await this.container(instanceId);
    const running = await container?.inspect().then((i) => Boolean(i.State?.Running));
    if (!container || !running) throw new Error(`instance ${instanceId} is not running`);
    this.log.line(instanceId, `execute: ${argv.join(' ')}`);
    return execInContainer(container, argv);
  }

  /** GET /containers/{name}/archive of the source path (rsync's trailing-slash rule), after its stat. */
  async readArchive(
    instanceId: number,
    path: string,
    signal: AbortSignal,
  ): Promise<{ tar: Readable; totalBytes: number | null }> {
    const container = await this.container(instanceId);
    if (!container) throw new Error(`No container for source instance ${instanceId} on its host`);
    const source = await prepareSource(container, path);
    if (!source) throw new Error(`Source path ${path} not found in instance ${instanceId}`);
    this.log.line(instanceId, `copy: sending a tar of ${path}`);
    const tar = (await container.getArchive({
      path: source.path,
      abortSignal: signal,
    })) as unknown as Readable;
    return { tar, totalBytes: source.totalBytes };
  }

  /**
   * What `docker diff` lists as added or changed (the container's writable layer), cut out of `docker export`
   * (the whole file system, read once) under upper/. Works on a stopped container.
   */
  async backupArchive(instanceId: number, signal: AbortSignal): Promise<Readable> {
    const container = await this.container(instanceId);
    if (!container) throw new Error('the container is gone from the host');
    const changes = ((await container.changes()) ?? []) as Array<{ Path: string; Kind: number }>;
    // Kind 0: modified, 1: added, 2: deleted (a deletion has nothing to keep).
    const changed = new Set(changes.filter((c) => c.Kind !== 2).map((c) => c.Path));
    this.log.line(instanceId, `backup: ${changed.size} changed path(s) of the container`);
    const exported = (await container.export({ abortSignal: signal })) as unknown as Readable;
    return changedFilesTar(exported, changed, 'upper', signal);
  }

  /** mkdir -p of the destination, then PUT /containers/{name}/archive fed by the returned sink. */
  async writeArchive(
    instanceId: number,
    path: string,
    signal: AbortSignal,
  ): Promise<{ sink: Writable; done: Promise<void> }> {
    const container = await this.container(instanceId);
    if (!container) throw new Error(`No container for destination instance ${instanceId} on its host`);
    const dir = await prepareDestination(container, path);
    this.log.line(instanceId, `copy: extracting into ${dir}`);
    const sink = new PassThrough({ highWaterMark: 1024 * 1024 });
    const done = Promise.resolve(container.putArchive(sink, { path: dir, abortSignal: signal })).then(
      () => undefined,
    );
    return { sink, done };
  }

  async readVolumeArchive(volumeId: number, signal: AbortSignal): Promise<{ tar: Readable }> {
    return readVolumeArchive(this.docker, this.options.machineId, volumeId, signal);
  }

  async writeVolumeArchive(
    volumeId: number,
    signal: AbortSignal,
  ): Promise<{ sink: Writable; done: Promise<void> }> {
    return writeVolumeArchive(this.docker, this.options.machineId, volumeId, signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.events?.destroy();
  }

  private async onEvent(event: DockerEvent): Promise<void> {
    if (this.closed || event.Type !== 'container') return;
    const instanceId = Number(event.Actor?.Attributes?.[INSTANCE_LABEL]);
    if (!Number.isInteger(instanceId)) return;
    const action = event.Action ?? event.status ?? '';
    const intent = this.intents.get(instanceId);
    if (action === 'start') {
      this.log.line(instanceId, 'docker: container started');
      // The keys are in place before the instance is reported running.
      await this.writeKeys(instanceId, this.docker.getContainer(containerName(instanceId)));
      await this.reportRunning(instanceId);
    } else if (action === 'die') {
      const exitCode = event.Actor?.Attributes?.exitCode ?? '?';
      this.log.line(instanceId, `docker: container exited with code ${exitCode}`);
      if (intent === 'stop') {
        this.send(instanceId, {
          actualStatus: 'stopped',
          sshHost: null,
          sshPort: null,
          ports: {},
          statusMsg: this.takeStopMessage(instanceId),
        });
      } else if (intent === 'run') {
        // It ended by itself: a crash or a finished command (spec: exited never reaches running again).
        this.send(instanceId, {
          actualStatus: 'exited',
          sshHost: null,
          sshPort: null,
          ports: {},
          statusMsg: `Container exited with code ${exitCode}`,
        });
      } // reboot and recycle: the loading report went out already; destroy: nothing to say
    } else if (action === 'oom') {
      this.log.line(instanceId, 'docker: container ran out of memory');
    }
  }

  private async reportRunning(instanceId: number): Promise<void> {
    const container = await this.container(instanceId);
    const info = await container?.inspect().catch(() => null);
    if (!info?.State.Running) return; // it died already; the die event tells
    const ports = publishedPorts(info.NetworkSettings.Ports as Parameters<typeof publishedPorts>[0]);
    this.intents.set(instanceId, 'run');
    this.send(instanceId, {
      actualStatus: 'running',
      sshHost: this.options.sshHost,
      sshPort: ports['22/tcp'] ?? null,
      ports,
      statusMsg: `Container ${info.Name.replace(/^\//, '')} running`,
    });
  }

  private async ensureImage(instanceId: number, image: string, imageLogin: string | null): Promise<void> {
    const local = await this.docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (local) {
      this.log.line(instanceId, `image ${image} is present locally; no pull`);
      return;
    }
    await this.pull(instanceId, image, imageLogin);
  }

  private async pull(instanceId: number, image: string, imageLogin: string | null): Promise<void> {
    const auth = registryAuth(imageLogin);
    this.log.line(instanceId, `pull ${image}${auth ? ` as ${auth.username} on ${auth.serveraddress}` : ''}`);
    const stream = (await this.docker.pull(image, auth ? { authconfig: auth } : {})) as Readable;
    await new Promise<void>((resolve, reject) =>
      this.docker.modem.followProgress(stream, (error: Error | null, output: Array<{ error?: string }>) => {
        const failure = error?.message ?? output?.find((o) => o.error)?.error;
        if (failure) reject(new Error(failure));
        else resolve();
      }),
    );
    this.log.line(instanceId, `pulled ${image}`);
  }

  async snapshot(request: AgentSnapshotRequest, signal: AbortSignal): Promise<string> {
    const { instanceId, snapshotId, image, pause, auth } = request;
    const container = await this.container(instanceId);
    if (!container) throw new Error('the container is gone from the host');
    const { repo, tag } = splitReference(image);
    // The login is never logged: only who pushes where.
    this.log.line(
      instanceId,
      `snapshot ${snapshotId}: commit${pause ? ' (container paused)' : ''} as ${image}, push${auth ? ` as ${auth.username}` : ''}`,
    );
    try {
      await container
        .commit({
          repo,
          tag,
          pause,
          comment: `rigmarket snapshot ${snapshotId} of instance ${instanceId}`,
          // The image must not carry this host's labels: a container run from it would pass for the instance's.
          changes: `LABEL ${MACHINE_LABEL}="" ${INSTANCE_LABEL}="" ${GPUS_LABEL}=""`,
          abortSignal: signal,
        })
        .catch((error: unknown) => Promise.reject(new Error(`docker commit failed: ${message(error)}`)));
      const stream = (await this.docker
        .getImage(repo)
        .push({ tag, abortSignal: signal, ...(auth ? { authconfig: auth } : {}) })) as Readable;
      const onAbort = () => stream.destroy(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      const digest = await new Promise<string>((resolve, reject) =>
        this.docker.modem.followProgress(stream, (error: Error | null, output: PushProgress[]) => {
          signal.removeEventListener('abort', onAbort);
          const failure = error?.message ?? output?.find((o) => o.error)?.error;
          if (failure) return reject(new Error(`docker push to ${repo.split('/')[0]} failed: ${failure}`));
          const found =
            output.find((o) => o.aux?.Digest)?.aux?.Digest ??
            output.map((o) => /digest: (sha256:[0-9a-f]{64})/.exec(o.status ?? '')?.[1]).find(Boolean);
          if (found) resolve(found);
          else reject(new Error('docker push ended without a digest'));
        }),
      );
      this.log.line(instanceId, `snapshot ${snapshotId}: pushed ${image}@${digest}`);
      return digest;
    } finally {
      // The host keeps no copy: the snapshot lives in the renter's registry.
      await this.docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
    }
  }

  /** GPU devices for a new container: those not held by this machine's other containers. */
  private async gpusFor(count: number): Promise<string[] | null> {
    const deviceIds = this.options.gpuDeviceIds;
    if (!deviceIds || deviceIds.length === 0) return null;
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${MACHINE_LABEL}=${this.options.machineId}`] },
    });
    const held = new Set(containers.flatMap((c) => (c.Labels[GPUS_LABEL] ?? '').split(',').filter(Boolean)));
    const picked = pickGpus(deviceIds, held, count);
    if (!picked) throw new Error(`${count} GPU(s) wanted, ${deviceIds.length - held.size} free on this host`);
    return picked;
  }

  private async container(instanceId: number): Promise<Docker.Container | null> {
    const container = this.docker.getContainer(containerName(instanceId));
    const exists = await container.inspect().then(
      () => true,
      (error: unknown) => (statusCode(error) === 404 ? false : Promise.reject(error)),
    );
    if (exists) return container;
    this.log.line(instanceId, 'no container for this instance on this host');
    return null;
  }

  private async removeContainer(instanceId: number): Promise<void> {
    await this.docker
      .getContainer(containerName(instanceId))
      .remove({ force: true, v: true })
      .catch((error: unknown) => {
        if (statusCode(error) !== 404) throw error;
      });
  }

  /** Runs a container call; the given status codes (304: already in that state) are not failures. */
  private async act(
    instanceId: number,
    call: (c: Docker.Container) => Promise<unknown>,
    harmless: number[] = [],
  ): Promise<void> {
    const container = await this.container(instanceId);
    if (!container) return this.fail(instanceId, 'The container is gone from the host');
    try {
      await call(container);
    } catch (error) {
      if (!harmless.includes(statusCode(error) ?? 0))
        this.fail(instanceId, `Docker refused: ${message(error)}`);
    }
  }

  private fail(instanceId: number, statusMsg: string): void {
    this.log.line(instanceId, statusMsg);
    this.send(instanceId, { actualStatus: 'exited', sshHost: null, sshPort: null, ports: {}, statusMsg });
  }

  private takeStopMessage(instanceId: number): string {
    const msg = this.stopMessages.get(instanceId) ?? STOPPED_MSG;
    this.stopMessages.delete(instanceId);
    return msg;
  }

  private send(instanceId: number, report: AgentHostReport): void {
    if (!this.closed) this.report(instanceId, report);
  }
}

interface PushProgress {
  status?: string;
  error?: string;
  aux?: { Tag?: string; Digest?: string; Size?: number };
}

/** `registry/path:tag` -> repository and tag (the tag is after the last colon that follows the last slash). */
export function splitReference(image: string): { repo: string; tag: string } {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/')
    ? { repo: image.slice(0, colon), tag: image.slice(colon + 1) }
    : { repo: image, tag: 'latest' };
}

const message = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 300);
