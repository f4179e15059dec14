import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { S3LogStore } from './s3-log-store';

/** The S3 log store against s3rver, a local S3-protocol server (no cloud is reachable from here). */
describe('S3 log store', () => {
  let server: S3rver;
  let dir: string;
  let store: S3LogStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 's3rver-'));
    server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: dir,
      configureBuckets: [{ name: 'rig-logs', configs: [] }],
    });
    const address = (await server.run()) as AddressInfo;
    store = new S3LogStore({
      bucket: 'rig-logs',
      prefix: 'instances/',
      endpoint: `http://127.0.0.1:${address.port}`,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a log file and reads it back', async () => {
    const name = `${'ab'.repeat(16)}.log`;
    await store.put(name, 'line 1\nline 2\n');
    expect(await store.get(name)).toBe('line 1\nline 2\n');
  });

  it('answers null for a file not (yet) uploaded, and for names that are not log files', async () => {
    expect(await store.get(`${'cd'.repeat(16)}.log`)).toBeNull();
    expect(await store.get('../etc/passwd')).toBeNull();
  });

  it('is chosen from the environment only when a bucket is configured', () => {
    expect(S3LogStore.fromEnvironment({})).toBeNull();
    expect(
      S3LogStore.fromEnvironment({
        RIGMARKET_LOG_S3_BUCKET: 'b',
        RIGMARKET_LOG_S3_ENDPOINT: 'http://127.0.0.1:9',
      }),
    ).toBeInstanceOf(S3LogStore);
  });
});
