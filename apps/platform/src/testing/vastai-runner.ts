import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The real CLI (PyPI vastai, installed by scripts/infra.sh into .infra/vastai-venv). */
export const VASTAI_CLI = join(__dirname, '../../../../.infra/vastai-venv/bin/vastai');
export const VASTAI_PYTHON = join(__dirname, '../../../../.infra/vastai-venv/bin/python');

export interface CliRun {
  stdout: string;
  stderr: string;
  /** stdout then stderr: the CLI prints most server errors to stderr and exits 0 on many of them. */
  out: string;
}

/** The environment the CLI runs in: this server, this key, a home of its own, no update check. */
export function vastaiEnv(baseUrl: string, apiKey: string, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    VAST_URL: baseUrl,
    VAST_API_KEY: apiKey,
    VASTAI_NO_UPDATE_CHECK: '1',
    PYTHONDONTWRITEBYTECODE: '1',
  };
}

/** Runs a program of the CLI's venv and returns what it printed, whatever its exit status. */
export async function runVenv(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(program, args, { env, timeout: 60_000 });
    return { stdout, stderr, out: stdout + stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
