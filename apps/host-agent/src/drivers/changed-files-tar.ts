import { PassThrough, type Readable } from 'node:stream';
import { extract, pack } from 'tar-stream';

/**
 * A tar of the entries of `source` (a container's exported file system) whose absolute path is in `keep`,
 * renamed under `prefix/` (e.g. `/root/notes.txt` -> `upper/root/notes.txt`), with their modes, times and
 * link targets. Entries are streamed one at a time: nothing is held beyond the entry being copied.
 */
export function changedFilesTar(
  source: Readable,
  keep: ReadonlySet<string>,
  prefix: string,
  signal?: AbortSignal,
): Readable {
  const reader = extract();
  const writer = pack();
  const out = new PassThrough();
  const fail = (error: Error) => {
    source.destroy();
    reader.destroy();
    out.destroy(error);
  };
  signal?.addEventListener('abort', () => fail(signal.reason as Error), { once: true });
  source.on('error', fail);
  reader.on('error', fail);
  writer.on('error', fail);
  reader.on('entry', (header, stream, next) => {
    const path = `/${header.name.replace(/^\.?\/+/, '').replace(/\/+$/, '')}`;
    if (!keep.has(path)) {
      stream.on('end', next);
      stream.resume();
      return;
    }
    const renamed = { ...header, name: `${prefix}${path}${header.type === 'directory' ? '/' : ''}` };
    if (header.type === 'link') {
      // A hard link names its target inside the archive: kept only with its target, renamed alike.
      const target = `/${(header.linkname ?? '').replace(/^\.?\/+/, '')}`;
      if (!keep.has(target)) {
        stream.on('end', next);
        stream.resume();
        return;
      }
      renamed.linkname = `${prefix}${target}`;
    }
    if (header.type !== 'file' && header.type !== 'contiguous-file') {
      stream.resume();
      writer.entry(renamed, (error) => (error ? fail(error) : next()));
      return;
    }
    const entry = writer.entry(renamed, (error) => (error ? fail(error) : next()));
    stream.pipe(entry);
  });
  reader.on('finish', () => writer.finalize());
  source.pipe(reader);
  writer.pipe(out);
  return out;
}
