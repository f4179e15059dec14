import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * A process that cannot serve does not stay half-alive. The fault is a WebAssembly trap inside PGlite: a hostile
 * body used to cause one (PGlite 0.3's jsonb parser overflowed its stack on deeply nested input; a SIGSEGV
 * listener, Nest's enableShutdownHooks() without arguments, then turned it into an endless loop). PGlite 0.4
 * answers that body, so the script checks it is served, then makes the engine's next call trap as a trap
 * surfaces (a WebAssembly.RuntimeError thrown by the PGlite call the pool makes: `execProtocol`, one call per
 * statement; `query` and `exec` too); the engine is marked faulted and servePlatform exits with status 70.
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
  await db.query('SELECT $1::jsonb AS j', [deep]);
  process.stdout.write('deep jsonb answered\\n');
  const { PGlite } = require('@electric-sql/pglite');
  const trap = () => Promise.reject(new WebAssembly.RuntimeError('memory access out of bounds'));
  PGlite.prototype.query = trap;
  PGlite.prototype.exec = trap;
  PGlite.prototype.execProtocol = trap;
  process.stdout.write('querying\\n');
  await db.query('SELECT 1').catch((e) => process.stdout.write('query failed: ' + e.message + '\\n'));
  process.stdout.write('still alive\\n');
})();
`;

/**
 * An engine PGlite 0.4 leaves unusable without a trap it lets through: the stack overflow of an infinitely
 * recursive plpgsql function is swallowed by its main loop (the statement answered an empty result, the next
 * one "ERRORDATA_STACK_SIZE exceeded", every later one an empty result). The pool makes it the same fault.
 */
const RECURSION_SCRIPT = `
const { Database } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { servePlatform } = require('@rigmarket/http-kit');
(async () => {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  await servePlatform({ modules: [], db, transport: new InProcessTransport(), port: 0 });
  await db.query('CREATE FUNCTION endless(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN endless(n + 1); END $$');
  process.stdout.write('querying\\n');
  const answer = await db.query('SELECT endless(1)').catch((e) => 'failed: ' + e.message);
  process.stdout.write('answered: ' + JSON.stringify(answer) + '\\n');
  await db.query('SELECT 1').catch((e) => process.stdout.write('query failed: ' + e.message + '\\n'));
  process.stdout.write('still alive\\n');
})();
`;

/** Runs `script` as a production process in this package; its exit (or 'hung' after 30 s) and its output. */
async function runProcess(
  script: string,
): Promise<{ exited: { code: number | null; signal: string | null } | 'hung'; output: string }> {
  const child = spawn(process.execPath, ['-e', script], {
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
  return { exited, output };
}

it('a fault of the embedded database engine ends the process (status 70) instead of wedging it', async () => {
  const { exited, output } = await runProcess(SCRIPT);
  expect(output).toContain('deep jsonb answered');
  expect(output).toContain('querying');
  expect(exited).toEqual({ code: 70, signal: null });
  expect(output).toMatch(/embedded database engine faulted/);
  expect(output).not.toContain('still alive');
}, 40_000);

it('an infinitely recursive plpgsql function ends the process (status 70) instead of leaving the engine answering empty results', async () => {
  const { exited, output } = await runProcess(RECURSION_SCRIPT);
  expect(output).toContain('querying');
  expect(exited).toEqual({ code: 70, signal: null });
  expect(output).toMatch(/embedded database engine faulted \(RangeError: Maximum call stack size exceeded\)/);
  expect(output).not.toContain('answered:');
  expect(output).not.toContain('still alive');
}, 40_000);
