import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@rigmarket/testing';
import { freePort } from './testing/crash-workload';

/**
 * What `npm start` shows a person: where it listens, the API reference, the admin key once, the demo hint,
 * then one line per request. JSON lines when stdout is a pipe (a log collector), short readable lines at a
 * terminal (run here under `script`, which gives the process a pseudo-terminal); Nest's route mappings only at
 * LOG_LEVEL=debug.
 */
const ROOT = join(__dirname, '..', '..', '..');
const MAIN = join(ROOT, 'apps/platform/dist/main.js');

interface Started {
  child: ChildProcess;
  output: () => string;
}

function startPlatform(env: NodeJS.ProcessEnv, terminal: boolean): Started {
  // The level and format are the defaults a person gets unless the test names them.
  const { LOG_LEVEL: _level, LOG_FORMAT: _format, ...inherited } = process.env;
  const childEnv: NodeJS.ProcessEnv = { ...inherited, NODE_ENV: 'production', ...env };
  const child = terminal
    ? spawn('script', ['-qfec', `"${process.execPath}" "${MAIN}"`, '/dev/null'], {
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [MAIN], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (started.child.exitCode === null) started.child.kill('SIGKILL');
}

// eslint-disable-next-line no-control-regex
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');

describe('what npm start prints', () => {
  const dirs: string[] = [];
  const running: Started[] = [];
  afterAll(async () => {
    for (const started of running) await stop(started);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function run(env: NodeJS.ProcessEnv, terminal: boolean, until: RegExp) {
    const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-startup-'));
    dirs.push(dataDir);
    const port = await freePort();
    const started = startPlatform({ PORT: String(port), RIGMARKET_DATA_DIR: dataDir, ...env }, terminal);
    running.push(started);
    await eventually(
      async () => (until.test(plain(started.output())) ? true : undefined),
      60_000,
      `the platform's start-up output (${terminal ? 'terminal' : 'pipe'})`,
    ).catch((error: Error) =>
      Promise.reject(new Error(`${error.message}\n${started.output().slice(-3000)}`)),
    );
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    await eventually(
      async () => (/GET \/healthz 200/.test(started.output()) ? true : undefined),
      10_000,
      'the request line',
    );
    await stop(started);
    return {
      port,
      lines: plain(started.output())
        .split('\n')
        .filter((line) => line.trim() !== ''),
    };
  }

  it('to a pipe: the URL, the API reference, the console, the admin key and the demo hint, then JSON lines; no route list', async () => {
    const { port, lines } = await run({}, false, /Demo: simulated hosts listed/);
    const url = `http://127.0.0.1:${port}`;
    const banner = lines.filter((line) => !line.startsWith('{'));
    expect(banner).toEqual([
      expect.stringContaining(`listening on ${url}/api/v0/`),
      `API reference: ${url}/docs (OpenAPI document: ${url}/api/v0/openapi.json)`,
      `Web console: ${url}/ (log in with an API key, or sign up)`,
      expect.stringMatching(/^Rigmarket admin API key \(shown once, keep it safe\): [0-9a-f]{64}$/),
      expect.stringMatching(new RegExp(`^Demo: simulated hosts listed as machines .*VAST_URL=${url} vastai`)),
    ]);
    const json = lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string });
    expect(json.find((entry) => /^GET \/healthz 200 \d+ ms$/.test(entry.msg))).toBeDefined();
    expect(lines.filter((line) => line.includes('Mapped {'))).toEqual([]);
    // A newcomer reads it: a handful of lines, not the hundred-odd route mappings of before.
    expect(json.filter((entry) => !/^(GET|POST|PUT|DELETE) \//.test(entry.msg)).length).toBeLessThan(15);
  }, 120_000);

  it('at a terminal: short readable lines (time, level, message), no JSON; LOG_LEVEL=debug adds the routes', async () => {
    const { lines } = await run({ RIGMARKET_DEMO_HOSTS: '0', LOG_LEVEL: 'debug' }, true, /listening on/);
    expect(lines.some((line) => /^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 \d+ ms$/.test(line))).toBe(true);
    expect(lines.filter((line) => line.trim().startsWith('{"level"'))).toEqual([]);
    const routes = lines.filter((line) => /^\[\d\d:\d\d:\d\d\] DEBUG: RouterExplorer: Mapped \{/.test(line));
    expect(routes.length).toBeGreaterThan(50);
  }, 120_000);
});
