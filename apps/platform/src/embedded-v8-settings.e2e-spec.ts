import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@rigmarket/testing';
import { freePort } from './testing/crash-workload';

const MAIN = join(__dirname, '..', 'dist', 'main.js');

/**
 * The embedded process as `npm start` runs it keeps V8's young generation at its first size (v8-flags.ts):
 * two 1 MB semi-spaces where V8 would grow them to 16 MB each during the start.
 */
describe("the embedded process's V8 settings", () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keep the young generation at 2 MB after a start and some requests (GET /metrics)', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-v8-'));
    const port = await freePort();
    const { RIGMARKET_V8_FLAGS: _flags, ...inherited } = process.env;
    child = spawn(process.execPath, [MAIN], {
      env: {
        ...inherited,
        PORT: String(port),
        RIGMARKET_DATA_DIR: join(dataDir, 'data'),
        RIGMARKET_DEMO_HOSTS: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const base = `http://127.0.0.1:${port}`;
    await eventually(
      async () =>
        (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined,
      60_000,
      'the embedded platform',
    );
    for (let n = 0; n < 20; n += 1)
      expect((await fetch(`${base}/api/v0/gpu_names/unique/`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const newSpace = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(metrics)?.[1];
    expect(Number(newSpace)).toBeGreaterThan(0);
    expect(Number(newSpace)).toBeLessThanOrEqual(2 * 1024 * 1024);
  }, 120_000);
});
