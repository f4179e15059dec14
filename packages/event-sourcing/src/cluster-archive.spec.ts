import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack, type Headers } from 'tar-stream';
import { unpackCluster } from './cluster-archive';

/** A gzipped tar of these entries, written to a file in `folder`. */
async function archive(folder: string, entries: { header: Headers; body?: string }[]): Promise<string> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => tar.once('end', resolve));
  for (const { header, body } of entries) tar.entry(header, body);
  tar.finalize();
  await ended;
  const path = join(folder, `archive-${entries.length}-${Date.now()}.tar.gz`);
  writeFileSync(path, gzipSync(Buffer.concat(chunks)));
  return path;
}

describe('unpackCluster (a first start from a kept cluster)', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'rigmarket-cluster-archive-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('writes the folders and files of an archive rooted at /, with their modification times', async () => {
    const mtime = new Date('2026-01-02T03:04:05Z');
    const path = await archive(folder, [
      { header: { name: '/', type: 'directory' } },
      { header: { name: '/PG_VERSION', type: 'file', mtime }, body: '17\n' },
      { header: { name: '/pg_wal/archive_status', type: 'directory' } },
      { header: { name: '/base/1/1247', type: 'file', mtime }, body: 'page' },
    ]);
    const into = join(folder, 'data');

    await unpackCluster(path, into);

    expect(readFileSync(join(into, 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(readFileSync(join(into, 'base', '1', '1247'), 'utf8')).toBe('page');
    expect(statSync(join(into, 'pg_wal', 'archive_status')).isDirectory()).toBe(true);
    expect(statSync(join(into, 'base', '1', '1247')).mtime.toISOString()).toBe(mtime.toISOString());
  });

  it('refuses an entry whose name leads out of the folder, and writes nothing beside it', async () => {
    const path = await archive(folder, [
      { header: { name: '/PG_VERSION', type: 'file' }, body: '17\n' },
      { header: { name: '/../escaped', type: 'file' }, body: 'x' },
    ]);
    await expect(unpackCluster(path, join(folder, 'data'))).rejects.toThrow(/outside the folder/);
    expect(existsSync(join(folder, 'escaped'))).toBe(false);
  });

  it('refuses links and other entries that are neither files nor folders', async () => {
    const path = await archive(folder, [
      { header: { name: '/PG_VERSION', type: 'file' }, body: '17\n' },
      { header: { name: '/base', type: 'symlink', linkname: '/etc' } },
    ]);
    await expect(unpackCluster(path, join(folder, 'data'))).rejects.toThrow(/type symlink/);
  });

  it('refuses an archive without PG_VERSION (not a whole cluster), one cut short, and one that is no archive', async () => {
    const partial = await archive(folder, [{ header: { name: '/base/1/1247', type: 'file' }, body: 'page' }]);
    await expect(unpackCluster(partial, join(folder, 'a'))).rejects.toThrow(/no PG_VERSION/);

    const whole = readFileSync(
      await archive(folder, [{ header: { name: '/PG_VERSION', type: 'file' }, body: '17\n'.repeat(5000) }]),
    );
    const cut = join(folder, 'cut.tar.gz');
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    await expect(unpackCluster(cut, join(folder, 'b'))).rejects.toThrow();

    const text = join(folder, 'text.tar.gz');
    writeFileSync(text, 'not a cluster');
    await expect(unpackCluster(text, join(folder, 'c'))).rejects.toThrow();
  });
});
