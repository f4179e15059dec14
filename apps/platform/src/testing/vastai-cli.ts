import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The real `vastai` CLI (PyPI, pinned; installed into .infra/vastai-venv by scripts/vastai-cli.sh). */
export const VASTAI_CLI = join(__dirname, '../../../../.infra/vastai-venv/bin/vastai');

export interface CliOutput {
  stdout: string;
  stderr: string;
  /** stdout and stderr together: the CLI prints server errors on either, and exits 0 on many of them. */
  out: string;
}

/**
 * Runs the CLI against `url` with `key` (no key: the CLI falls back to the one `set api-key` stored under
 * `home`). Resolves with the output whatever the exit code, so tests read what a user would read.
 */
export function runVastai(
  target: { url: string; home: string; key?: string },
  args: string[],
  input = '',
): Promise<CliOutput> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: target.home,
    VAST_URL: target.url,
    VASTAI_NO_UPDATE_CHECK: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    ...(target.key === undefined ? {} : { VAST_API_KEY: target.key }),
  };
  return new Promise((resolve) => {
    const child = execFile(VASTAI_CLI, args, { env, timeout: 60_000 }, (_error, stdout, stderr) =>
      resolve({ stdout, stderr, out: `${stdout}${stderr}` }),
    );
    child.stdin?.end(input);
  });
}
