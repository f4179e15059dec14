import { hkdfSync } from 'node:crypto';
import { sealKeyFromConfig } from '../instances/pending-keys';
import { openWith, sealWith } from '../instances/sealing';

/**
 * Seals an account's environment variable values (AES-256-GCM, a key per account and name derived from
 * the instance seal key, RIGMARKET_INSTANCE_SEAL_KEY): the events and the read model hold them sealed, so
 * the database or an event dump alone does not give them away, and a sealed value copied to another
 * account or name does not open.
 */
export class EnvVarBox {
  constructor(private readonly secret: Buffer) {}

  static fromConfig(value: string | undefined, env: NodeJS.ProcessEnv = process.env): EnvVarBox {
    return new EnvVarBox(sealKeyFromConfig(value, env));
  }

  private keyFor(userId: number, name: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, `rigmarket-env-var:${userId}`, `env-var:${name}`, 32));
  }

  seal(value: string, userId: number, name: string): string {
    return sealWith(this.keyFor(userId, name), value);
  }

  /** null when it cannot be opened (another seal key, account or name). */
  open(sealed: string, userId: number, name: string): string | null {
    try {
      return openWith(this.keyFor(userId, name), sealed);
    } catch {
      return null;
    }
  }
}
