import { Command, InvalidArgumentError, Option } from 'commander';
import type { HostAgentOptions } from './agent';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive integer is expected');
  return n;
};

/** The agent's command line (commander); `--help` lists it. */
export function parseAgentArguments(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
): HostAgentOptions {
  const program = new Command('rigmarket-agent')
    .description('Rigmarket host agent: registers this GPU host, heartbeats, and runs rented instances')
    .requiredOption(
      '--api-url <url>',
      'platform base URL (the edge or marketplace-api)',
      env.RIGMARKET_API_URL,
    )
    .requiredOption('--api-key <key>', "the host owner's API key (machine_write)", env.RIGMARKET_API_KEY)
    .option(
      '--channel-url <url>',
      'agent channel URL (default: the api url as ws:// + /api/v0/agent/channel)',
    )
    .addOption(
      new Option('--driver <driver>', 'container runtime').choices(['docker', 'simulated']).default('docker'),
    )
    .option(
      '--simulate-gpus <spec>',
      "offer simulated GPUs instead of nvidia-smi's: N[:NAME[:RAM_MB]], e.g. 2:RTX_4090",
    )
    .option(
      '--state-dir <dir>',
      'where the agent remembers its machine id',
      env.RIGMARKET_AGENT_STATE_DIR ?? '/var/lib/rigmarket-agent',
    )
    .option('--public-address <ip>', 'public address reported as ssh_host (default: first non-internal IPv4)')
    .option('--heartbeat-interval <ms>', 'marketplace heartbeat interval in ms', positiveInt, 60_000)
    .option(
      '--metrics-interval <ms>',
      'how often GPU utilisation, memory, temperature and power are sampled (nvidia-smi) and reported; 0: never',
      (value: string) => (value === '0' ? 0 : positiveInt(value)),
      15_000,
    )
    .option(
      '--benchmark-interval <ms>',
      'how often the machine is benchmarked (disk writes, CPU) and the results reported, first at start; 0: never',
      (value: string) => (value === '0' ? 0 : positiveInt(value)),
      24 * 3600_000,
    )
    .option('--inet-up <mbps>', 'upload bandwidth to report', positiveInt, 100)
    .option('--inet-down <mbps>', 'download bandwidth to report', positiveInt, 100)
    .option('--direct-ports <n>', 'host ports instances may map directly, to report', positiveInt, 100)
    .exitOverride()
    .configureOutput({ writeErr });
  program.parse(argv, { from: 'user' });
  const o = program.opts<{
    apiUrl: string;
    apiKey: string;
    channelUrl?: string;
    driver: 'docker' | 'simulated';
    simulateGpus?: string;
    stateDir: string;
    publicAddress?: string;
    heartbeatInterval: number;
    metricsInterval: number;
    benchmarkInterval: number;
    inetUp: number;
    inetDown: number;
    directPorts: number;
  }>();
  return {
    apiUrl: o.apiUrl,
    apiKey: o.apiKey,
    channelUrl: o.channelUrl,
    driver: o.driver,
    simulateGpus: o.simulateGpus,
    stateDir: o.stateDir,
    publicAddress: o.publicAddress,
    heartbeatIntervalMs: o.heartbeatInterval,
    metricsIntervalMs: o.metricsInterval,
    benchmarkIntervalMs: o.benchmarkInterval,
    inetUpMbps: o.inetUp,
    inetDownMbps: o.inetDown,
    directPortCount: o.directPorts,
  };
}
