import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * How a sealed value is written: `<prefix><iv><separator><tag><separator><ciphertext>`. Each user keeps the
 * format its stored values already have (they are read back after upgrades).
 */
export interface SealFormat {
  prefix: string;
  separator: string;
  encoding: 'base64' | 'base64url';
}

/**
 * The one AES-256-GCM sealing helper (a 32-byte key, a random 12-byte IV per value, the tag checked on
 * open): TOTP secrets, instance keys waiting for their provision, idempotent answers, registry logins.
 */
export function sealText(key: Buffer, plain: string, format: SealFormat): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return (
    format.prefix +
    [iv, cipher.getAuthTag(), body].map((part) => part.toString(format.encoding)).join(format.separator)
  );
}

/** Opens what sealText sealed; throws on another format, key or a tampered value. */
export function openText(key: Buffer, sealed: string, format: SealFormat): string {
  if (!sealed.startsWith(format.prefix)) throw new Error('unknown sealed format');
  const [iv, tag, body, extra] = sealed.slice(format.prefix.length).split(format.separator);
  if (!iv || !tag || body === undefined || extra !== undefined) throw new Error('unknown sealed format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, format.encoding));
  decipher.setAuthTag(Buffer.from(tag, format.encoding));
  return Buffer.concat([decipher.update(Buffer.from(body, format.encoding)), decipher.final()]).toString(
    'utf8',
  );
}
