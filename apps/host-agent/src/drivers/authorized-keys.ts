import type Docker from 'dockerode';
import { demuxDockerLog } from './container-spec';

export const AUTHORIZED_KEYS_PATH = '/root/.ssh/authorized_keys';

/**
 * Run as root inside the container: /root/.ssh (700) gets a fresh authorized_keys (600) holding the
 * container's own PUBLIC_KEY (the service entrypoint's, when set) and the instance's keys, one per line.
 * It is written beside and renamed over the old file, so sshd never reads half of it. The keys come in the
 * exec's environment, never on a command line.
 */
const SCRIPT = [
  'umask 077',
  'mkdir -p /root/.ssh',
  'chmod 700 /root/.ssh',
  'tmp=/root/.ssh/.authorized_keys.rigmarket.$$',
  '{ if [ -n "${PUBLIC_KEY:-}" ]; then printf \'%s\\n\' "$PUBLIC_KEY"; fi; printf \'%s\' "$RIGMARKET_AUTHORIZED_KEYS"; } > "$tmp"',
  'chmod 600 "$tmp"',
  `mv -f "$tmp" ${AUTHORIZED_KEYS_PATH}`,
].join(' && ');

/** The file's content for these keys (one line each, newline-terminated; empty for none). */
export const authorizedKeysFile = (keys: readonly string[]): string => keys.map((key) => `${key}\n`).join('');

/**
 * Writes the instance's authorized keys into its running container (docker exec of /bin/sh as root).
 * Rejects with the shell's output when it fails (e.g. an image without /bin/sh).
 */
export async function writeAuthorizedKeys(
  container: Docker.Container,
  keys: readonly string[],
): Promise<void> {
  const exec = await container.exec({
    Cmd: ['/bin/sh', '-c', SCRIPT],
    User: '0:0',
    Env: [`RIGMARKET_AUTHORIZED_KEYS=${authorizedKeysFile(keys)}`],
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve());
    stream.on('close', () => resolve());
    stream.on('error', reject);
  });
  let { ExitCode, Running } = await exec.inspect();
  for (let tries = 0; Running && tries < 40; tries += 1) {
    await new Promise((r) => setTimeout(r, 50));
    ({ ExitCode, Running } = await exec.inspect());
  }
  if (ExitCode !== 0)
    throw new Error(
      `writing ${AUTHORIZED_KEYS_PATH} failed (exit ${String(ExitCode)}): ${demuxDockerLog(Buffer.concat(chunks)).trim().slice(0, 300)}`,
    );
}
