import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { type SealFormat, openText, sealText } from '@rigmarket/contracts';
import { hashKey } from '@rigmarket/http-kit';
import { createCryptoPlugin } from '@otplib/core';
import { generateSync, verifySync } from '@otplib/totp';

// otplib's TOTP core (RFC 6238) with a node:crypto plugin; secrets are decoded from base32 here.
// otplib's default plugins (@scure/base, @noble/hashes 2) ship as ES modules only, which this CommonJS
// build and jest cannot load.
const crypto = createCryptoPlugin({
  name: 'node',
  hmac: (algorithm, key, data) => new Uint8Array(createHmac(algorithm, key).update(data).digest()),
  randomBytes: (length) => new Uint8Array(randomBytes(length)),
});
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '').replace(/\s+/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('Invalid base32 secret');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** TOTP secrets at rest: `v1.<iv>.<tag>.<ciphertext>` (base64url parts). */
const SECRET_FORMAT: SealFormat = { prefix: 'v1.', separator: '.', encoding: 'base64url' };

/** AES-256-GCM for TOTP secrets at rest (contracts' sealText). */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32)
      throw new Error('RIGMARKET_TFA_KEY must be 32 bytes (64 hex characters or base64)');
    this.key = key;
  }

  /** From RIGMARKET_TFA_KEY (hex or base64); a random key with a warning when unset (development only). */
  static fromConfig(value: string | undefined): SecretBox {
    if (!value) {
      if (process.env.NODE_ENV === 'production')
        throw new Error('RIGMARKET_TFA_KEY is required in production');
      new Logger('tfa').warn(
        'RIGMARKET_TFA_KEY is not set: using a random key; TOTP secrets will not survive a restart',
      );
      return new SecretBox(randomBytes(32));
    }
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    return new SecretBox(key);
  }

  seal(plain: string): string {
    return sealText(this.key, plain, SECRET_FORMAT);
  }

  open(sealed: string): string {
    return openText(this.key, sealed, SECRET_FORMAT);
  }
}

/** A 6-digit code. */
export function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** The tfa_secret handed to clients; only its hash is stored. */
export function newTfaSecret(): string {
  return randomBytes(24).toString('hex');
}

const BACKUP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** `XXXX-XXXX-XXXX`. */
export function newBackupCode(): string {
  const chars = Array.from({ length: 12 }, () => BACKUP_ALPHABET[randomInt(0, BACKUP_ALPHABET.length)]);
  return [chars.slice(0, 4), chars.slice(4, 8), chars.slice(8)].map((g) => g.join('')).join('-');
}

export function hashBackupCode(code: string): string {
  return hashKey(code.trim().toUpperCase());
}

export function hashCode(code: string): string {
  return hashKey(code.trim());
}

/** 160 random bits, base32 (what authenticator apps expect). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** otpauth://totp/Rigmarket:<account>?secret=...&issuer=Rigmarket (no QR image is produced). */
export function provisioningUri(secret: string, account: string): string {
  return `otpauth://totp/Rigmarket:${encodeURIComponent(account)}?secret=${secret}&issuer=Rigmarket`;
}

/** The current code of a base32 secret (tests and tooling). */
export function totpCode(secret: string, at: Date): string {
  return generateSync({ secret: base32Decode(secret), crypto, epoch: Math.floor(at.getTime() / 1000) });
}

/** RFC 6238, 6 digits, 30 s, one step either way: the matched step, or null. */
export function totpStep(secret: string, code: string, at: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  try {
    const result = verifySync({
      secret: base32Decode(secret),
      crypto,
      token: code,
      epoch: Math.floor(at.getTime() / 1000),
      epochTolerance: 30,
    });
    if (!result.valid) return null;
    // otplib reports the matched counter as timeStep for TOTP; fall back to epoch / 30 plus delta.
    const step = (result as { timeStep?: number }).timeStep;
    return typeof step === 'number' ? step : Math.floor(at.getTime() / 30_000) + result.delta;
  } catch {
    return null;
  }
}
