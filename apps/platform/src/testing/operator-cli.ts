import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

export interface OperatorCliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built operator CLI (`rigmarket ...`) on the database at `databaseUrl`; never throws on exit != 0. */
export function runOperatorCli(databaseUrl: string, ...args: string[]): Promise<OperatorCliRun> {
  return runWith({ ...process.env, DATABASE_URL: databaseUrl }, args);
}

/** The same on an embedded (PGlite) data folder: DATABASE_URL unset, RIGMARKET_DATA_DIR given. */
export function runOperatorCliEmbedded(dataDir: string, ...args: string[]): Promise<OperatorCliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, RIGMARKET_DATA_DIR: dataDir };
  delete env.DATABASE_URL;
  return runWith(env, args);
}

function runWith(env: NodeJS.ProcessEnv, args: string[]): Promise<OperatorCliRun> {
  return execFileAsync(process.execPath, [CLI, ...args], { env, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, ...r }),
    (e: OperatorCliRun) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}
