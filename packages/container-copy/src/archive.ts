import type { IncomingMessage } from 'node:http';
import { posix } from 'node:path';
import type Docker from 'dockerode';

/**
 * The Docker Engine archive API as both copy paths use it (sync-maintenance's one-engine executor and
 * the host agent's Docker driver): stat a path, read it as a tar, write a tar into a directory.
 */
export interface PathStat {
  name: string;
  size: number;
  mode: number;
}

/** Docker's X-Docker-Container-Path-Stat header: base64 JSON of the path's stat; null when the path does not exist. */
export async function statPath(container: Docker.Container, path: string): Promise<PathStat | null> {
  try {
    const response = (await container.infoArchive({ path })) as IncomingMessage;
    response.resume();
    const header = response.headers['x-docker-container-path-stat'];
    return typeof header === 'string'
      ? (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PathStat)
      : null;
  } catch {
    return null;
  }
}

/** Directories have the Go os.ModeDir bit (1 << 31) in Docker's stat mode. */
export const isDirectory = (stat: PathStat): boolean => (stat.mode & 0x80000000) !== 0;

/** The tar's size is known for a file (its stat), not for a directory (progress then shows bytes only). */
export const knownTotalBytes = (stat: PathStat): number | null => (isDirectory(stat) ? null : stat.size);

/** rsync's convention: a source path ending in '/' copies the directory's contents, not the directory. */
export function archiveSourcePath(srcPath: string): string {
  return srcPath.endsWith('/') && srcPath !== '/' ? `${srcPath}.` : srcPath;
}

/** Where a tar is extracted: the destination path as a directory ('/' when empty). */
export const archiveDestinationDir = (dstPath: string): string => posix.normalize(dstPath || '/');

/** Runs a command in the container and waits for it, ignoring its output (mkdir -p before an extract). */
export async function execQuiet(container: Docker.Container, cmd: string[]): Promise<void> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve) => {
    stream.on('end', () => resolve());
    stream.on('close', () => resolve());
    stream.on('error', () => resolve());
    stream.resume();
  });
}

/** Creates the destination directory (mkdir -p) in the container; a failure shows up at the extract instead. */
export async function ensureDirectory(container: Docker.Container, dir: string): Promise<void> {
  await execQuiet(container, ['mkdir', '-p', dir]).catch(() => undefined);
}

/**
 * The source side of a container-to-container copy: the path to archive (rsync's trailing-slash rule)
 * and its size when it is a file (null for a directory); null when the path does not exist.
 */
export async function prepareSource(
  container: Docker.Container,
  srcPath: string,
): Promise<{ path: string; totalBytes: number | null } | null> {
  const path = archiveSourcePath(srcPath);
  const stat = await statPath(container, path);
  return stat && { path, totalBytes: knownTotalBytes(stat) };
}

/** The destination side: creates the directory the archive is extracted into (mkdir -p) and returns it. */
export async function prepareDestination(container: Docker.Container, dstPath: string): Promise<string> {
  const dir = archiveDestinationDir(dstPath);
  await ensureDirectory(container, dir);
  return dir;
}
