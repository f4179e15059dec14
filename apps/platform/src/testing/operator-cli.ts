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
  return execFileAsync(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: OperatorCliRun) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}
