import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * A process that cannot serve does not stay half-alive. The fault is the one a hostile body used to cause:
 * PGlite's jsonb parser overflows its stack inside WebAssembly (an out-of-bounds trap). A SIGSEGV listener
 * (Nest's enableShutdownHooks() without arguments) turned it into an endless loop that never answered again;
 * now the trap is an error, the database engine is marked faulted and servePlatform exits with status 70.
 */
const SCRIPT = `
const { Database } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { servePlatform } = require('@rigmarket/http-kit');
(async () => {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  await servePlatform({ modules: [], db, transport: new InProcessTransport(), port: 0 });
  let deep = '1';
  for (let i = 0; i < 2000; i++) deep = '{"a":' + deep + '}';
  process.stdout.write('querying\\n');
  await db.query('SELECT $1::jsonb AS j', [deep]).catch((e) => process.stdout.write('query failed: ' + e.message + '\\n'));
  process.stdout.write('still alive\\n');
})();
`;

it('a fault of the embedded database engine ends the process (status 70) instead of wedging it', async () => {
  const child = spawn(process.execPath, ['-e', SCRIPT], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = await new Promise<{ code: number | null; signal: string | null } | 'hung'>((resolve) => {
    const timer = setTimeout(() => resolve('hung'), 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
  if (exited === 'hung') child.kill('SIGKILL');
  expect(output).toContain('querying');
  expect(exited).toEqual({ code: 70, signal: null });
  expect(output).toMatch(/embedded database engine faulted/);
  expect(output).not.toContain('still alive');
}, 40_000);
