import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'rigmarket-secrets.json';

interface EmbeddedSecrets {
  /** Seals TOTP secrets (identity-2fa). */
  tfaKey: string;
  /** Seals the keys of instances waiting for their volume (instance-lifecycle). */
  instanceSealKey: string;
}

/**
 * Embedded mode keeps its own secrets beside its data, so that what they protect survives a restart:
 * without it, TOTP secrets sealed under a per-process random key could not be opened after `npm start`
 * again, and every user with TOTP would be locked out. Created once (mode 0600); a key given in the
 * environment (RIGMARKET_TFA_KEY, RIGMARKET_INSTANCE_SEAL_KEY) wins and is never written.
 */
export function embeddedSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): EmbeddedSecrets {
  const path = join(dataDir, FILE);
  let stored: Partial<EmbeddedSecrets> = {};
  if (existsSync(path)) stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<EmbeddedSecrets>;
  if (!stored.tfaKey || !stored.instanceSealKey) {
    stored = {
      tfaKey: randomBytes(32).toString('hex'),
      instanceSealKey: randomBytes(32).toString('hex'),
      ...stored,
    };
    writeFileSync(path, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return {
    tfaKey: env.RIGMARKET_TFA_KEY || stored.tfaKey!,
    instanceSealKey: env.RIGMARKET_INSTANCE_SEAL_KEY || stored.instanceSealKey!,
  };
}
