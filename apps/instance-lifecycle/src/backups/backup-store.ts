import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where the objects of backups live (docs/instances.md, "Instance backups"). */
export interface BackupStore {
  /** A new object of the backup: what is written to `sink` is kept once `done` resolves (with its size). */
  create(backupId: number, name: string): { sink: Writable; done: Promise<number> };
  /** null = not there. */
  open(backupId: number, name: string): Promise<{ stream: Readable; size: number } | null>;
  /** Every object of the backup (nothing when there is none). */
  remove(backupId: number): Promise<void>;
}

/** The one object of an instance's backup: its container's changes, a tar whose entries are under upper/. */
export const BACKUP_OBJECT = 'upper.tar';
const OBJECT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * RIGMARKET_BACKUP_DIR; else `<RIGMARKET_DATA_DIR>/instance-backups`; else a folder of this OS user under the
 * temp dir. Whichever it is, DirectoryBackupStore makes it owner-only (0700) before writing.
 */
export function defaultBackupDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RIGMARKET_BACKUP_DIR) return resolve(env.RIGMARKET_BACKUP_DIR);
  if (env.RIGMARKET_DATA_DIR) return resolve(env.RIGMARKET_DATA_DIR, 'instance-backups');
  return join(tmpdir(), `rigmarket-backups-${process.getuid?.() ?? 'user'}`);
}

/**
 * Backups as files readable by the platform's OS user only (folders 0700, files 0600): one folder per
 * backup, `<dir>/<backupId>/<name>`. An object is written to a `.part` file and renamed when complete.
 */
export class DirectoryBackupStore implements BackupStore {
  constructor(private readonly dir: string = defaultBackupDir()) {}

  create(backupId: number, name: string): { sink: Writable; done: Promise<number> } {
    const folder = this.folder(backupId);
    const path = join(folder, this.checked(name));
    const part = `${path}.part`;
    const sink = new PassThrough({ highWaterMark: 1024 * 1024 });
    const done = (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await chmod(this.dir, 0o700);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const file = createWriteStream(part, { mode: 0o600 });
      try {
        await pipeline(sink, file);
      } catch (error) {
        await rm(part, { force: true });
        throw error;
      }
      await rename(part, path);
      return (await stat(path)).size;
    })();
    return { sink, done };
  }

  async open(backupId: number, name: string): Promise<{ stream: Readable; size: number } | null> {
    if (!OBJECT_NAME.test(name)) return null;
    const path = join(this.folder(backupId), name);
    try {
      const { size } = await stat(path);
      return { stream: createReadStream(path), size };
    } catch {
      return null;
    }
  }

  async remove(backupId: number): Promise<void> {
    await rm(this.folder(backupId), { recursive: true, force: true });
  }

  private folder(backupId: number): string {
    if (!Number.isInteger(backupId) || backupId < 1) throw new Error(`bad backup id ${backupId}`);
    return join(this.dir, String(backupId));
  }

  private checked(name: string): string {
    if (!OBJECT_NAME.test(name)) throw new Error(`bad backup object name ${name}`);
    return name;
  }
}
