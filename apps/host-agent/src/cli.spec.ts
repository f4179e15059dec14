import { defaultChannelUrl } from './agent';
import { parseAgentArguments } from './cli';

describe('agent command line', () => {
  it('reads the options of `npm run agent -- ...`', () => {
    const options = parseAgentArguments(
      [
        '--api-url',
        'http://127.0.0.1:8080',
        '--api-key',
        'KEY',
        '--driver',
        'simulated',
        '--simulate-gpus',
        '2:RTX_4090',
        '--state-dir',
        '/tmp/a',
      ],
      {},
    );
    expect(options).toMatchObject({
      apiUrl: 'http://127.0.0.1:8080',
      apiKey: 'KEY',
      driver: 'simulated',
      simulateGpus: '2:RTX_4090',
      stateDir: '/tmp/a',
      heartbeatIntervalMs: 60_000,
      metricsIntervalMs: 15_000,
      benchmarkIntervalMs: 86_400_000,
      directPortCount: 100,
    });
    const base = ['--api-url', 'http://x', '--api-key', 'k'];
    expect(parseAgentArguments([...base, '--metrics-interval', '0'], {}).metricsIntervalMs).toBe(0);
    expect(parseAgentArguments([...base, '--metrics-interval', '2000'], {}).metricsIntervalMs).toBe(2000);
  });

  it('defaults to the Docker driver and refuses another', () => {
    expect(parseAgentArguments(['--api-url', 'http://x', '--api-key', 'k'], {}).driver).toBe('docker');
    const errors: string[] = [];
    const collect = (text: string) => void errors.push(text);
    expect(() =>
      parseAgentArguments(['--api-url', 'http://x', '--api-key', 'k', '--driver', 'podman'], {}, collect),
    ).toThrow(/podman/);
    expect(() => parseAgentArguments(['--api-key', 'k'], {}, collect)).toThrow(/api-url/);
    expect(errors).toHaveLength(2);
  });

  it('finds the agent channel beside the API', () => {
    expect(defaultChannelUrl('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/api/v0/agent/channel');
    expect(defaultChannelUrl('https://rigmarket.example/')).toBe(
      'wss://rigmarket.example/api/v0/agent/channel',
    );
  });
});
