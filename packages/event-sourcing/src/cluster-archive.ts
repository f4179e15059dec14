import { closeSync, createReadStream, existsSync, mkdirSync, openSync, utimesSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';

/**
 * Unpacks a gzipped cluster (PGlite's `dumpDataDir('gzip')`: a tar of the data folder, names rooted at `/`)
 * into the folder `into`, as PGlite's own `loadDataDir` writes it: folders made, files written with their
 * modification times. Done here, in this process, instead of by a PGlite in a child process: a first start
 * then compiles and starts the engine once, not twice (docs/benchmarks.md, "A first start unpacks its cluster
 * without a second engine"). Rejects an archive that is not one (bad gzip, cut short, an entry that is
 * neither a file nor a folder, or a name that leaves `into`) and one without PG_VERSION (the mark of a whole
 * cluster); what it wrote is then the caller's to remove.
 */
export async function unpackCluster(archive: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  const root = resolve(into);
  const entries = extract();
  // The file being written, closed here if the archive fails midway (cut short, refused).
  let openFile: number | undefined;
  // Folders made so far: most files' folder is made already, and asking again costs a system call each.
  const made = new Set<string>([root]);
  const makeFolder = (folder: string) => {
    if (made.has(folder)) return;
    mkdirSync(folder, { recursive: true });
    made.add(folder);
  };
  entries.on('entry', (header, stream, next) => {
    const fail = (error: unknown) =>
      entries.destroy(error instanceof Error ? error : new Error(String(error)));
    // Names are rooted at `/` (the data folder); one that leads out of it (`..`) is refused.
    const target = resolve(root, header.name.replace(/^\/+/, ''));
    const inside = relative(root, target);
    if (inside === '' && header.type === 'directory') {
      stream.resume();
      stream.once('end', next);
      return;
    }
    if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
      fail(new Error(`cluster archive ${archive}: an entry outside the folder (${header.name})`));
      return;
    }
    if (header.type === 'directory') {
      makeFolder(target);
      stream.resume();
      stream.once('end', next);
    } else if (header.type === 'file') {
      // Written synchronously as it arrives: a write stream per file costs ~1 ms more each over the cluster's
      // ~1,500 files, and holding a file whole first would hold its 16 MB of WAL twice.
      try {
        makeFolder(dirname(target));
        openFile = openSync(target, 'w');
      } catch (error) {
        fail(error);
        return;
      }
      const fd = openFile;
      stream.on('data', (chunk: Buffer) => {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          fail(error);
        }
      });
      stream.once('end', () => {
        try {
          openFile = undefined;
          closeSync(fd);
          if (header.mtime) utimesSync(target, header.mtime, header.mtime);
          next();
        } catch (error) {
          fail(error);
        }
      });
    } else {
      fail(new Error(`cluster archive ${archive}: an entry of type ${header.type} (${header.name})`));
    }
  });
  try {
    await pipeline(createReadStream(archive), createGunzip(), entries);
  } finally {
    if (openFile !== undefined) closeSync(openFile);
  }
  if (!existsSync(join(root, 'PG_VERSION')))
    throw new Error(`cluster archive ${archive}: no PG_VERSION in it`);
}
