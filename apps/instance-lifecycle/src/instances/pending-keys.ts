import { hkdfSync, randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { openWith, sealWith } from './sealing';

/**
 * RIGMARKET_INSTANCE_SEAL_KEY (32 bytes, hex or base64): seals the keys of instances waiting for their volume
 * and the accounts' environment variables (EnvVarBox). Random per process, with a warning, outside production.
 */
export function sealKeyFromConfig(value: string | undefined, env: NodeJS.ProcessEnv = process.env): Buffer {
  if (!value) {
    if (env.NODE_ENV === 'production')
      throw new Error('RIGMARKET_INSTANCE_SEAL_KEY is required in production');
    new Logger('instance-lifecycle').warn(
      'RIGMARKET_INSTANCE_SEAL_KEY is not set: using a random key; an instance waiting for its volume across a restart will fail to provision, and environment variables will not open after a restart',
    );
    return randomBytes(32);
  }
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('RIGMARKET_INSTANCE_SEAL_KEY must be 32 bytes, hex or base64');
  return key;
}

/**
 * An instance waiting for its new volume is provisioned later, and its host needs the instance key then
 * (CONTAINER_API_KEY). Until then the key waits in pending_provisions sealed (AES-256-GCM, a key per
 * instance derived from RIGMARKET_INSTANCE_SEAL_KEY), never in the clear: the database alone does not
 * give it away. Every instance-lifecycle process must share the seal key; embedded mode keeps one in its
 * data folder.
 */
export class PendingKeyBox {
  constructor(private readonly secret: Buffer) {}

  static fromConfig(value: string | undefined, env: NodeJS.ProcessEnv = process.env): PendingKeyBox {
    return new PendingKeyBox(sealKeyFromConfig(value, env));
  }

  private keyFor(instanceId: number, purpose = 'instance-api-key'): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, `rigmarket-pending-key:${instanceId}`, purpose, 32));
  }

  /** The instance's registry login (`-u .. -p .. registry`), sealed under its own derived key. */
  sealLogin(imageLogin: string, instanceId: number): string {
    return sealWith(this.keyFor(instanceId, 'registry-login'), imageLogin);
  }

  openLogin(sealed: string, instanceId: number): string | null {
    try {
      return openWith(this.keyFor(instanceId, 'registry-login'), sealed);
    } catch {
      return null;
    }
  }

  seal(instanceApiKey: string, instanceId: number): string {
    return sealWith(this.keyFor(instanceId), instanceApiKey);
  }

  /** null when it cannot be opened (another seal key, or another instance's row). */
  open(sealed: string, instanceId: number): string | null {
    try {
      return openWith(this.keyFor(instanceId), sealed);
    } catch {
      return null;
    }
  }
}
