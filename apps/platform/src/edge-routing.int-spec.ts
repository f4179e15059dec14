import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The nginx edge of distributed mode routes every path of the API to the app that owns it: the real
 * nginx with stand-in upstreams (infra/nginx/test-routing.sh), on ports of its own so it runs beside
 * anything else.
 */
describe('the nginx edge', () => {
  const prefix = mkdtempSync(join(tmpdir(), 'edge-test-'));
  // nginx's workers run as an unprivileged user: they must be able to enter the prefix.
  chmodSync(prefix, 0o755);
  afterAll(() => rmSync(prefix, { recursive: true, force: true }));

  it('routes every route of the table to its app, with JSON errors for unknown paths and stopped upstreams', async () => {
    const script = join(__dirname, '..', '..', '..', 'infra', 'nginx', 'test-routing.sh');
    const env = {
      ...process.env,
      EDGE_PORT: '28080',
      IDENTITY_PORT: '28081',
      MARKETPLACE_PORT: '28082',
      INSTANCE_PORT: '28083',
      SYNC_PORT: '28084',
      NGINX_PREFIX: prefix,
    };
    const { stdout, stderr } = await promisify(execFile)('bash', [script], { env, timeout: 240_000 });
    expect(`${stdout}${stderr}`).toMatch(/ROUTING CHECK PASSED \(\d+ routes\)/);
  }, 300_000);
});
