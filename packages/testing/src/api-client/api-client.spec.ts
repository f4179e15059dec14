import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..', '..');

/** The committed client types are what openapi-typescript makes of the committed document (else: npm run api-client). */
describe('the generated API client', () => {
  it('is in step with docs/openapi.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-client-'));
    try {
      const output = join(dir, 'schema.ts');
      await run(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
          join(ROOT, 'docs', 'openapi.json'),
          '--output',
          output,
        ],
        { cwd: ROOT, timeout: 60_000 },
      );
      const committed = readFileSync(join(__dirname, 'schema.ts'), 'utf8');
      expect(readFileSync(output, 'utf8') === committed).toBe(true);
      // It knows the spec's routes and resources.
      expect(committed).toContain('"/api/v0/asks/{offerId}"');
      expect(committed).toMatch(/Instance: \{/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
