import { mkdir } from 'node:fs/promises';
import { AGENT_CHANNEL_PATH } from '@rigmarket/contracts';
import Docker from 'dockerode';
import { ChannelClient } from './channel/channel-client';
import { type AgentDriver, DaemonLog } from './drivers/agent-driver';
import { DockerDriver } from './drivers/docker.driver';
import { SimulatedAgentDriver } from './drivers/simulated.driver';
import { defaultPublicAddress, detectMachine, detectNvidiaGpus } from './hardware/detect';
import { runBenchmarks } from './hardware/benchmarks';
import { GpuSampler } from './hardware/gpu-sampler';
import { type GpuInventory, parseSimulatedGpus } from './hardware/nvidia-smi';
import { MarketplaceClient, loadAgentState, saveAgentState } from './marketplace-client';

export interface HostAgentOptions {
  /** The platform's base URL, e.g. http://127.0.0.1:8080 (the edge, or marketplace-api). */
  apiUrl: string;
  /** The agent channel; default: apiUrl as ws(s):// + /api/v0/agent/channel. */
  channelUrl?: string;
  /** The host owner's API key (machine_write). */
  apiKey: string;
  /** Where the agent remembers its machine id (and the free disk it reports). */
  stateDir: string;
  driver: 'docker' | 'simulated';
  /** `N[:NAME[:RAM_MB]]`: GPUs to report instead of nvidia-smi's (containers then get no GPU devices). */
  simulateGpus?: string;
  /** The machine's public address (ssh_host); default: the first non-internal IPv4. */
  publicAddress?: string;
  /** Marketplace heartbeat (reliability) interval. */
  heartbeatIntervalMs?: number;
  /** How often the GPUs are sampled (nvidia-smi) and the sample sent over the channel; 0: never. Default 15 s. */
  metricsIntervalMs?: number;
  /** How often the agent benchmarks its machine (disk writes, CPU) and reports it, first at start; 0: never. Default a day. */
  benchmarkIntervalMs?: number;
  inetUpMbps?: number;
  inetDownMbps?: number;
  /** Host ports instances may map directly, reported at registration (`vastai self-test machine` wants 3 per GPU). Default 100. */
  directPortCount?: number;
  /** Docker Engine client; default: DOCKER_HOST or /var/run/docker.sock. */
  docker?: Docker;
  log?: (line: string) => void;
}

export function defaultChannelUrl(apiUrl: string): string {
  const url = new URL(AGENT_CHANNEL_PATH, apiUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** Docker client from DOCKER_HOST (unix:// or tcp://), else the default socket. */
export function dockerFromEnvironment(): Docker {
  const host = process.env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  if (host?.startsWith('tcp://')) {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    return new Docker({ host: url.hostname, port: Number(url.port || 2375) });
  }
  return new Docker({ socketPath: '/var/run/docker.sock' });
}

/**
 * The daemon of one GPU host: detects its hardware, registers its machine once (remembered in the state
 * directory), heartbeats to the marketplace, and serves the agent channel with a Docker or simulated driver.
 */
export class HostAgent {
  private heartbeat: NodeJS.Timeout | undefined;
  private sampler: GpuSampler | undefined;
  private benchmarks: NodeJS.Timeout | undefined;
  /** Heartbeats in progress: stop() waits for them (none reaches the platform after it). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  private constructor(
    readonly machineId: number,
    readonly gpus: GpuInventory,
    private readonly driver: AgentDriver,
    private readonly channel: ChannelClient,
  ) {}

  static async start(options: HostAgentOptions): Promise<HostAgent> {
    const log = options.log ?? ((line: string) => console.log(line));
    const simulated = options.simulateGpus ? parseSimulatedGpus(options.simulateGpus) : null;
    const gpus = simulated ?? (await detectNvidiaGpus());
    if (!gpus)
      throw new Error(
        'No NVIDIA GPU found (nvidia-smi); pass --simulate-gpus N[:NAME] to offer simulated GPUs',
      );
    const publicAddress = options.publicAddress ?? defaultPublicAddress();
    const marketplace = new MarketplaceClient(options.apiUrl, options.apiKey);
    await mkdir(options.stateDir, { recursive: true });

    let state = await loadAgentState(options.stateDir, options.apiUrl);
    if (state) {
      log(`machine ${state.machineId} (from ${options.stateDir}); not registering again`);
    } else {
      const machine = await detectMachine(gpus, {
        dataDir: options.stateDir,
        publicAddress,
        inetUpMbps: options.inetUpMbps ?? 100,
        inetDownMbps: options.inetDownMbps ?? 100,
        directPortCount: options.directPortCount ?? 100,
      });
      const machineId = await marketplace.registerMachine(machine);
      state = { apiUrl: options.apiUrl, machineId };
      await saveAgentState(options.stateDir, state);
      log(
        `registered machine ${machineId}: ${machine.num_gpus}x ${machine.gpu_name}, ${machine.cpu_cores} cores, ${machine.cpu_ram} MB RAM, ${machine.disk_space} GB disk`,
      );
    }
    const machineId = state.machineId;

    const daemonLog = new DaemonLog(log);
    const driver: AgentDriver =
      options.driver === 'docker'
        ? new DockerDriver(options.docker ?? dockerFromEnvironment(), {
            machineId,
            sshHost: publicAddress,
            gpuDeviceIds: simulated ? null : gpus.deviceIds,
            daemonLog,
            onError: log,
          })
        : new SimulatedAgentDriver({ sshHost: publicAddress, daemonLog });
    const channel = new ChannelClient({
      channelUrl: options.channelUrl ?? defaultChannelUrl(options.apiUrl),
      apiKey: options.apiKey,
      machineId,
      driver,
      log,
    });
    await driver.watch((instanceId, report) => channel.report(instanceId, report));
    const agent = new HostAgent(machineId, gpus, driver, channel);

    const beat = () =>
      agent.track(() =>
        marketplace
          .heartbeat(machineId)
          .catch((error: unknown) => log(`marketplace heartbeat failed: ${String(error)}`)),
      );
    await beat();
    agent.heartbeat = setInterval(() => void beat(), options.heartbeatIntervalMs ?? 60_000);
    await channel.open();
    const metricsIntervalMs = options.metricsIntervalMs ?? 15_000;
    if (metricsIntervalMs > 0) {
      agent.sampler = new GpuSampler({
        intervalMs: metricsIntervalMs,
        onSample: (samples) => channel.gpuMetrics(samples),
        log,
      });
      agent.sampler.start();
    }
    const benchmarkIntervalMs = options.benchmarkIntervalMs ?? 24 * 3600_000;
    if (benchmarkIntervalMs > 0) {
      // Not waited for by stop() (a few seconds of disk and CPU work): its report goes nowhere after it.
      const bench = () =>
        runBenchmarks(options.stateDir).then(
          (results) => channel.benchmark(results),
          (error: unknown) => log(`benchmark failed: ${String(error)}`),
        );
      void bench();
      agent.benchmarks = setInterval(() => void bench(), benchmarkIntervalMs);
      agent.benchmarks.unref();
    }
    return agent;
  }

  get channelConnected(): boolean {
    return this.channel.connected;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.sampler?.stop();
    if (this.benchmarks) clearInterval(this.benchmarks);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.channel.close();
    await this.driver.close();
  }

  /** Runs a heartbeat unless stopped, tracked until it settles. */
  private async track(work: () => Promise<unknown>): Promise<void> {
    if (this.stopped) return;
    const running = work();
    this.inFlight.add(running);
    try {
      await running;
    } finally {
      this.inFlight.delete(running);
    }
  }
}
