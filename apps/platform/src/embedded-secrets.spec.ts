import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedSecrets } from './embedded-secrets';

describe("embedded mode's secrets", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rm-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates its 256-bit keys once, readable by the owner only, and gives the same key on the next start', () => {
    const first = embeddedSecrets(dir, {});
    expect(first.tfaKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.instanceSealKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.instanceSealKey).not.toBe(first.tfaKey);
    expect(statSync(join(dir, 'rigmarket-secrets.json')).mode & 0o777).toBe(0o600);
    expect(embeddedSecrets(dir, {})).toEqual(first);
  });

  it('prefers RIGMARKET_TFA_KEY from the environment and never writes it down', () => {
    const given = 'ab'.repeat(32);
    expect(embeddedSecrets(dir, { RIGMARKET_TFA_KEY: given }).tfaKey).toBe(given);
    expect(readFileSync(join(dir, 'rigmarket-secrets.json'), 'utf8')).not.toContain(given);
  });
});
