import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLogDir, DirectoryLogStore } from './log-store';

describe('instance logs on disk', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rm-logs-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const name = (n: number) => `${n.toString(16).padStart(32, '0')}.log`;

  it('are readable by the platform user only, also in a folder that existed world-readable', async () => {
    const dir = join(root, 'instance-logs');
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    const store = new DirectoryLogStore(dir);
    await store.put(name(1), 'secret line\n');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, name(1))).mode & 0o777).toBe(0o600);
    expect(await store.get(name(1))).toBe('secret line\n');
  });

  it('are deleted after the retention period', async () => {
    const dir = join(root, 'instance-logs');
    const store = new DirectoryLogStore(dir, 60_000);
    await store.put(name(1), 'old\n');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(join(dir, name(1)), twoMinutesAgo, twoMinutesAgo);
    expect(await store.get(name(1))).toBeNull();
    await store.put(name(2), 'new\n');
    expect(() => statSync(join(dir, name(1)))).toThrow();
    expect(await store.get(name(2))).toBe('new\n');
  });

  it('live under the data folder by default, never in a folder shared by all users', () => {
    expect(defaultLogDir({ RIGMARKET_DATA_DIR: '/srv/rig' })).toBe('/srv/rig/instance-logs');
    expect(defaultLogDir({ RIGMARKET_LOG_DIR: '/var/log/rig', RIGMARKET_DATA_DIR: '/srv/rig' })).toBe(
      '/var/log/rig',
    );
    expect(defaultLogDir({})).not.toBe(join(tmpdir(), 'rigmarket-logs'));
  });
});
