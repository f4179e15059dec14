import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The real `vastai` CLI (PyPI, pinned; installed into .infra/vastai-venv by scripts/vastai-cli.sh). */
export const VASTAI_CLI = join(__dirname, '../../../../.infra/vastai-venv/bin/vastai');
/** The python of that venv: runs the CLI's own SDK (`from vastai import VastAI`). */
export const VASTAI_PYTHON = join(__dirname, '../../../../.infra/vastai-venv/bin/python');

export interface CliOutput {
  stdout: string;
  stderr: string;
  /** stdout and stderr together: the CLI prints server errors on either, and exits 0 on many of them. */
  out: string;
}

/** Where the CLI points: the server, the key (none: the one `set api-key` stored under `home`), its home. */
export interface CliTarget {
  url: string;
  home: string;
  key?: string;
}

function runInVenv(program: string, target: CliTarget, args: string[], input: string): Promise<CliOutput> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: target.home,
    VAST_URL: target.url,
    VASTAI_NO_UPDATE_CHECK: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    ...(target.key === undefined ? {} : { VAST_API_KEY: target.key }),
  };
  return new Promise((resolve) => {
    const child = execFile(program, args, { env, timeout: 60_000 }, (_error, stdout, stderr) =>
      resolve({ stdout, stderr, out: `${stdout}${stderr}` }),
    );
    child.stdin?.end(input);
  });
}

/**
 * Runs the CLI against `target`. Resolves with the output whatever the exit code, so tests read what a user
 * would read.
 */
export function runVastai(target: CliTarget, args: string[], input = ''): Promise<CliOutput> {
  return runInVenv(VASTAI_CLI, target, args, input);
}

/** Runs the venv's python (e.g. `-c` with a call of the CLI's SDK) in the same environment as the CLI. */
export function runVastaiPython(target: CliTarget, args: string[]): Promise<CliOutput> {
  return runInVenv(VASTAI_PYTHON, target, args, '');
}
