import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** Where versions before this one kept the file: inside the data (database) folder. */
const LEGACY_FILE = 'rigmarket-secrets.json';

interface EmbeddedSecrets {
  /** Seals TOTP secrets (identity-2fa). */
  tfaKey: string;
  /** Seals the keys of instances waiting for their volume (instance-lifecycle). */
  instanceSealKey: string;
  /** Seals templates' registry passwords (marketplace; instance-lifecycle opens them). */
  registryKey: string;
}

/**
 * RIGMARKET_SECRETS_FILE, else `<data dir>.secrets.json` beside the data folder (`./data` ->
 * `./data.secrets.json`): never inside it, so a copy or backup of the database folder does not carry the
 * keys that open what it seals.
 */
export function secretsFilePath(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.RIGMARKET_SECRETS_FILE
    ? resolve(env.RIGMARKET_SECRETS_FILE)
    : `${resolve(dataDir)}.secrets.json`;
}

function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // Another file system: copy, then delete.
    copyFileSync(from, to);
    chmodSync(to, 0o600);
    unlinkSync(from);
  }
}

/**
 * Embedded mode keeps its own secrets so that what they protect survives a restart: without them, TOTP
 * secrets sealed under a per-process random key could not be opened after `npm start` again, and every
 * user with TOTP would be locked out. Created once (mode 0600) at secretsFilePath(); a file left inside
 * the data folder by an older version is moved there. A key given in the environment (RIGMARKET_TFA_KEY,
 * RIGMARKET_INSTANCE_SEAL_KEY, RIGMARKET_REGISTRY_KEY) wins and is never written.
 */
export function embeddedSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): EmbeddedSecrets {
  const path = secretsFilePath(dataDir, env);
  const rel = relative(resolve(dataDir), path);
  if (!rel.startsWith('..') && rel !== path) {
    throw new Error(
      `RIGMARKET_SECRETS_FILE (${path}) is inside the data folder ${resolve(dataDir)}: keep the keys apart from the data they seal`,
    );
  }
  const legacy = join(dataDir, LEGACY_FILE);
  if (existsSync(legacy) && !existsSync(path)) moveFile(legacy, path);
  let stored: Partial<EmbeddedSecrets> = {};
  if (existsSync(path)) stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<EmbeddedSecrets>;
  if (!stored.tfaKey || !stored.instanceSealKey || !stored.registryKey) {
    stored = {
      tfaKey: randomBytes(32).toString('hex'),
      instanceSealKey: randomBytes(32).toString('hex'),
      registryKey: randomBytes(32).toString('hex'),
      ...stored,
    };
    writeFileSync(path, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  chmodSync(path, 0o600);
  return {
    tfaKey: env.RIGMARKET_TFA_KEY || stored.tfaKey!,
    instanceSealKey: env.RIGMARKET_INSTANCE_SEAL_KEY || stored.instanceSealKey!,
    registryKey: env.RIGMARKET_REGISTRY_KEY || stored.registryKey!,
  };
}
