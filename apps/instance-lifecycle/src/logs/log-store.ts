import { chmod, mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ApiError } from '@rigmarket/contracts';
import { RE2JS } from 're2js';

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

/** Log filtering is bounded (docs/instances.md "Logs"): the filter's length, the bytes scanned, the time. */
export const LOG_FILTER_MAX_LENGTH = 1024;
/** Only the newest lines up to this many bytes (UTF-16 code units) are scanned by a filter. */
export const LOG_SCAN_MAX_BYTES = 16 * 1024 * 1024;
/** A filter works in slices of this many milliseconds, giving the event loop a turn between them. */
export const LOG_SCAN_SLICE_MS = 10;
/** A filter that has not finished after this long stops: the lines matched so far (the newest) are kept. */
export const LOG_SCAN_BUDGET_MS = 2_000;

export interface LogSelectionLimits {
  maxScanBytes?: number;
  sliceMs?: number;
  budgetMs?: number;
}

/** A grep-style test: RE2 syntax, matched in linear time (re2js: no backtracking, so no ReDoS); else a substring. */
export function lineMatcher(filter: string): (line: string) => boolean {
  if (filter.length > LOG_FILTER_MAX_LENGTH)
    throw ApiError.badRequest(`filter is longer than ${LOG_FILTER_MAX_LENGTH} characters`);
  try {
    const re = RE2JS.compile(filter);
    return (line) => re.matcher(line).find();
  } catch {
    // Not RE2 syntax (an unbalanced parenthesis, a back-reference): the CLI's users mean the text itself.
    return (line) => line.includes(filter);
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * tail (string or number) and a grep-style filter, applied to the newest lines first: a filter scans at most
 * LOG_SCAN_MAX_BYTES, in slices of LOG_SCAN_SLICE_MS with the event loop served between them, and stops after
 * LOG_SCAN_BUDGET_MS; with a tail it stops as soon as it has the tail's lines.
 */
export async function selectLines(
  lines: readonly string[],
  tail: number | null,
  filter: string | null,
  limits: LogSelectionLimits = {},
): Promise<string[]> {
  if (!filter) return tail === null ? [...lines] : lines.slice(Math.max(0, lines.length - tail));
  const test = lineMatcher(filter);
  const maxScanBytes = limits.maxScanBytes ?? LOG_SCAN_MAX_BYTES;
  const sliceMs = limits.sliceMs ?? LOG_SCAN_SLICE_MS;
  const deadline = Date.now() + (limits.budgetMs ?? LOG_SCAN_BUDGET_MS);
  const want = tail ?? Number.POSITIVE_INFINITY;
  const selected: string[] = [];
  let scanned = 0;
  let sliceEnd = Date.now() + sliceMs;
  for (let i = lines.length - 1; i >= 0 && selected.length < want; i--) {
    const line = lines[i] ?? '';
    scanned += line.length + 1;
    if (scanned > maxScanBytes) break;
    if (test(line)) selected.push(line);
    if (Date.now() >= sliceEnd) {
      if (Date.now() >= deadline) break;
      await nextTurn();
      sliceEnd = Date.now() + sliceMs;
    }
  }
  return selected.reverse();
}
