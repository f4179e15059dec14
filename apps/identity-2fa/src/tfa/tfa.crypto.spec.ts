import {
  SecretBox,
  base32Decode,
  base32Encode,
  newBackupCode,
  newTotpSecret,
  provisioningUri,
  totpCode,
  totpStep,
} from './tfa.crypto';

describe('2FA crypto', () => {
  it('seals TOTP secrets with AES-256-GCM and refuses tampering or another key', () => {
    const box = new SecretBox(Buffer.alloc(32, 7));
    const sealed = box.seal('JBSWY3DPEHPK3PXPJBSWY3DP');
    expect(sealed).not.toContain('JBSWY3DP');
    expect(box.open(sealed)).toBe('JBSWY3DPEHPK3PXPJBSWY3DP');
    const parts = sealed.split('.');
    const tampered = [...parts.slice(0, 3), Buffer.from('x').toString('base64url') + parts[3]!.slice(2)].join(
      '.',
    );
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
    expect(SecretBox.fromConfig('ab'.repeat(32)).open(SecretBox.fromConfig('ab'.repeat(32)).seal('s'))).toBe(
      's',
    );
  });

  it('matches the RFC 6238 SHA-1 test vector (last 6 digits)', () => {
    // RFC 6238 appendix B: secret "12345678901234567890", T = 59 s -> 94287082.
    const secret = base32Encode(Buffer.from('12345678901234567890'));
    expect(totpCode(secret, new Date(59_000))).toBe('287082');
    expect(Buffer.from(base32Decode(secret)).toString()).toBe('12345678901234567890');
  });

  it('accepts one step of drift either way and reports the matched step', () => {
    const secret = newTotpSecret();
    const now = new Date('2026-03-01T12:00:10.000Z');
    const step = Math.floor(now.getTime() / 30_000);
    expect(totpStep(secret, totpCode(secret, now), now)).toBe(step);
    expect(totpStep(secret, totpCode(secret, new Date(now.getTime() - 30_000)), now)).toBe(step - 1);
    expect(totpStep(secret, totpCode(secret, new Date(now.getTime() + 30_000)), now)).toBe(step + 1);
    expect(totpStep(secret, totpCode(secret, new Date(now.getTime() + 90_000)), now)).toBeNull();
    expect(totpStep(secret, 'abcdef', now)).toBeNull();
  });

  it('backup codes are XXXX-XXXX-XXXX; provisioning URIs are otpauth', () => {
    expect(newBackupCode()).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(provisioningUri('ABC', 'a@b.test')).toBe(
      'otpauth://totp/Rigmarket:a%40b.test?secret=ABC&issuer=Rigmarket',
    );
  });
});
