import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedSecrets, secretsFilePath } from './embedded-secrets';

describe("embedded mode's secrets", () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rm-secrets-'));
    dir = join(root, 'data');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates its 256-bit keys once, outside the data folder, readable by the owner only, the same on the next start', () => {
    const first = embeddedSecrets(dir, {});
    expect(first.tfaKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.instanceSealKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.instanceSealKey).not.toBe(first.tfaKey);
    expect(first.registryKey).toMatch(/^[0-9a-f]{64}$/);
    const file = join(root, 'data.secrets.json');
    expect(secretsFilePath(dir, {})).toBe(file);
    expect(readFileSync(file, 'utf8')).toContain(first.tfaKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(dir)).toBe(false);
    expect(embeddedSecrets(dir, {})).toEqual(first);
  });

  it('moves the file an older version kept inside the data folder out of it, keeping its keys', () => {
    mkdirSync(dir);
    const old = { tfaKey: 'cd'.repeat(32), instanceSealKey: 'ef'.repeat(32) };
    writeFileSync(join(dir, 'rigmarket-secrets.json'), JSON.stringify(old));
    expect(embeddedSecrets(dir, {})).toMatchObject(old);
    expect(existsSync(join(dir, 'rigmarket-secrets.json'))).toBe(false);
    expect(JSON.parse(readFileSync(join(root, 'data.secrets.json'), 'utf8'))).toMatchObject(old);
  });

  it('takes RIGMARKET_SECRETS_FILE, but never one inside the data folder', () => {
    const file = join(root, 'keys', '..', 'elsewhere.json');
    embeddedSecrets(dir, { RIGMARKET_SECRETS_FILE: file });
    expect(existsSync(join(root, 'elsewhere.json'))).toBe(true);
    expect(() => embeddedSecrets(dir, { RIGMARKET_SECRETS_FILE: join(dir, 'keys.json') })).toThrow(
      /inside the data folder/,
    );
  });

  it('prefers RIGMARKET_TFA_KEY from the environment and never writes it down', () => {
    const given = 'ab'.repeat(32);
    expect(embeddedSecrets(dir, { RIGMARKET_TFA_KEY: given }).tfaKey).toBe(given);
    expect(readFileSync(join(root, 'data.secrets.json'), 'utf8')).not.toContain(given);
  });
});
