import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where uploaded logs live until fetched from result_url. A local directory now; S3 later. */
export interface LogStore {
  put(name: string, text: string): Promise<void>;
  /** null = not (yet) there */
  get(name: string): Promise<string | null>;
}

export class DirectoryLogStore implements LogStore {
  constructor(
    private readonly dir: string = process.env.RIGMARKET_LOG_DIR ?? join(tmpdir(), 'rigmarket-logs'),
  ) {}

  async put(name: string, text: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(join(this.dir, name), text, 'utf8');
  }

  async get(name: string): Promise<string | null> {
    if (!/^[0-9a-f]{32}\.log$/.test(name)) return null;
    try {
      return await readFile(join(this.dir, name), 'utf8');
    } catch {
      return null;
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
