import { hkdfSync, randomBytes } from 'node:crypto';
import { type SealFormat, openText, sealText } from './sealing';

/** How a sealed registry password starts; anything else is a legacy value stored in the clear. */
const SEALED = 'sealed:v1:';
const FORMAT: SealFormat = { prefix: SEALED, separator: ':', encoding: 'base64' };

/**
 * Registry credentials (a template's docker_login_pass) are secrets: stored and carried only sealed
 * (AES-256-GCM under a key derived from RIGMARKET_REGISTRY_KEY and the owner of the value, e.g.
 * `template:12`, so a sealed value copied onto another template does not open). marketplace seals them;
 * instance-lifecycle opens them for the template's creator only, when it provisions one of the creator's
 * instances; both share the key. docs/marketplace.md, "Registry credentials".
 */
export class RegistryLoginBox {
  constructor(private readonly secret: Buffer) {}

  /** RIGMARKET_REGISTRY_KEY (32 bytes, hex or base64); random per process, with a warning, outside production. */
  static fromConfig(
    value: string | undefined,
    env: NodeJS.ProcessEnv = process.env,
    warn: (message: string) => void = (message) => process.emitWarning(message),
  ): RegistryLoginBox {
    if (!value) {
      if (env.NODE_ENV === 'production') throw new Error('RIGMARKET_REGISTRY_KEY is required in production');
      if (env.NODE_ENV !== 'test')
        warn(
          'RIGMARKET_REGISTRY_KEY is not set: using a random key; registry passwords of templates will not open after a restart or in another process',
        );
      return new RegistryLoginBox(randomBytes(32));
    }
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length !== 32) throw new Error('RIGMARKET_REGISTRY_KEY must be 32 bytes, hex or base64');
    return new RegistryLoginBox(key);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED);
  }

  private keyFor(scope: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, `rigmarket-registry-login:${scope}`, 'registry', 32));
  }

  /** '' stays '' (no password); a value already sealed is kept. */
  seal(plain: string, scope: string): string {
    if (plain === '' || RegistryLoginBox.isSealed(plain)) return plain;
    return sealText(this.keyFor(scope), plain, FORMAT);
  }

  /** The password; a legacy clear value as it is; null when it cannot be opened (another key or scope). */
  open(value: string, scope: string): string | null {
    if (!RegistryLoginBox.isSealed(value)) return value;
    try {
      return openText(this.keyFor(scope), value, FORMAT);
    } catch {
      return null;
    }
  }
}

export const templateLoginScope = (templateId: number): string => `template:${templateId}`;
