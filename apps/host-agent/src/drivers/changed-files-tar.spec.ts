import { Readable } from 'node:stream';
import { extract, pack } from 'tar-stream';
import { changedFilesTar } from './changed-files-tar';

/** A tar as `docker export` writes it: relative names, folders with a trailing slash. */
function exported(): Readable {
  const tar = pack();
  tar.entry({ name: 'bin/', type: 'directory' });
  tar.entry({ name: 'bin/sh', mode: 0o755 }, 'the image');
  tar.entry({ name: 'root/', type: 'directory' });
  tar.entry({ name: 'root/notes.txt', mode: 0o600 }, 'written in the container');
  tar.entry({ name: 'root/same.txt' }, 'from the image');
  tar.entry({ name: 'root/notes-link', type: 'link', linkname: 'root/notes.txt' });
  tar.entry({ name: 'etc/hosts-link', type: 'link', linkname: 'bin/sh' });
  tar.finalize();
  return tar;
}

async function entries(source: Readable): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const reader = extract();
  reader.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      found[header.name] =
        header.type === 'link'
          ? `-> ${header.linkname}`
          : `${header.type}:${Buffer.concat(chunks).toString()}`;
      next();
    });
  });
  await new Promise<void>((resolve, reject) => {
    reader.on('finish', resolve);
    reader.on('error', reject);
    source.on('error', reject);
    source.pipe(reader);
  });
  return found;
}

describe("the tar of a container's changes", () => {
  it('keeps the changed entries only, under upper/, with hard links to kept files', async () => {
    const changed = new Set(['/root', '/root/notes.txt', '/root/notes-link', '/etc/hosts-link']);
    expect(await entries(changedFilesTar(exported(), changed, 'upper'))).toEqual({
      'upper/root/': 'directory:',
      'upper/root/notes.txt': 'file:written in the container',
      'upper/root/notes-link': '-> upper/root/notes.txt',
    });
  });

  it('is an empty tar when nothing changed', async () => {
    expect(await entries(changedFilesTar(exported(), new Set(), 'upper'))).toEqual({});
  });
});
