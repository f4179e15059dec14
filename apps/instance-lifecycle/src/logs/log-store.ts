import { chmod, mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where uploaded logs live until fetched from result_url: a local directory or an S3 bucket. */
export interface LogStore {
  put(name: string, text: string): Promise<void>;
  /** null = not (yet) there */
  get(name: string): Promise<string | null>;
}

/** Uploaded logs are one-off extracts fetched right after the request: kept a day unless configured. */
export const DEFAULT_LOG_RETENTION_MS = 24 * 3600_000;

/**
 * RIGMARKET_LOG_DIR; else `<RIGMARKET_DATA_DIR>/instance-logs`; else a folder of this OS user under the
 * temp dir. Whichever it is, DirectoryLogStore makes it owner-only (0700) before writing.
 */
export function defaultLogDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RIGMARKET_LOG_DIR) return resolve(env.RIGMARKET_LOG_DIR);
  if (env.RIGMARKET_DATA_DIR) return resolve(env.RIGMARKET_DATA_DIR, 'instance-logs');
  return join(tmpdir(), `rigmarket-logs-${process.getuid?.() ?? 'user'}`);
}

const LOG_FILE = /^[0-9a-f]{32}\.log$/;

/**
 * Logs as files readable by the platform's OS user only (directory 0700, files 0600), deleted once older
 * than the retention period (RIGMARKET_LOG_RETENTION_MS, default a day; swept on each upload).
 */
export class DirectoryLogStore implements LogStore {
  constructor(
    private readonly dir: string = defaultLogDir(),
    private readonly retentionMs: number = Number(
      process.env.RIGMARKET_LOG_RETENTION_MS || DEFAULT_LOG_RETENTION_MS,
    ),
  ) {}

  async put(name: string, text: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // An existing folder (one from an older version) is narrowed too.
    await chmod(this.dir, 0o700);
    await this.sweep();
    const path = join(this.dir, name);
    await writeFile(path, text, { encoding: 'utf8', mode: 0o600 });
    await chmod(path, 0o600);
  }

  async get(name: string): Promise<string | null> {
    if (!LOG_FILE.test(name)) return null;
    try {
      const path = join(this.dir, name);
      if (Date.now() - (await stat(path)).mtimeMs > this.retentionMs) return null;
      return await readFile(path, 'utf8');
    } catch {
      return null;
    }
  }

  /** Deletes the logs older than the retention period. */
  async sweep(now: number = Date.now()): Promise<void> {
    for (const name of await readdir(this.dir)) {
      if (!LOG_FILE.test(name)) continue;
      const path = join(this.dir, name);
      try {
        if (now - (await stat(path)).mtimeMs > this.retentionMs) await unlink(path);
      } catch {
        // Deleted meanwhile by another process sharing the folder.
      }
    }
  }
}

/** tail (string or number) and a grep-style filter (a regular expression, else a plain substring). */
export function selectLines(lines: readonly string[], tail: number | null, filter: string | null): string[] {
  let selected = [...lines];
  if (filter) {
    let test: (line: string) => boolean;
    try {
      const re = new RegExp(filter);
      test = (line) => re.test(line);
    } catch {
      test = (line) => line.includes(filter);
    }
    selected = selected.filter(test);
  }
  return tail === null ? selected : selected.slice(Math.max(0, selected.length - tail));
}
