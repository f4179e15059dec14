import { type SealFormat, openText, sealText } from './sealing';

const key = Buffer.alloc(32, 7);
const formats: Record<string, SealFormat> = {
  instance: { prefix: 'v1:', separator: ':', encoding: 'base64' },
  tfa: { prefix: 'v1.', separator: '.', encoding: 'base64url' },
  registry: { prefix: 'sealed:v1:', separator: ':', encoding: 'base64' },
};

describe('sealText / openText (AES-256-GCM)', () => {
  it('opens what it sealed, in each format, and seals the same text differently each time', () => {
    for (const format of Object.values(formats)) {
      const a = sealText(key, 'secret', format);
      expect(a.startsWith(format.prefix)).toBe(true);
      expect(a).not.toContain('secret');
      expect(a).not.toBe(sealText(key, 'secret', format));
      expect(openText(key, a, format)).toBe('secret');
      expect(openText(key, sealText(key, '', format), format)).toBe('');
    }
  });

  it('opens values the three former sealers wrote (stored values survive the upgrade)', () => {
    expect(
      openText(key, 'v1:iy3WPjj4fs4/DeNu:epEu5svbK4xnxKC4aLanhQ==:ceHM8sPnAtVEzq5j', formats.instance!),
    ).toBe('instance-key');
    expect(
      openText(key, 'v1.7Lh9dThDBlXnoqjZ.Y_jRvvwbetS3FQbrs9RDJg.9i9Kil6tuKEYxm_W8EhuYQ', formats.tfa!),
    ).toBe('JBSWY3DPEHPK3PXP');
    expect(
      openText(key, 'sealed:v1:P1Xf5wGqhLCzUIqo:hcvbzNboi8UARlN3P3Q+qw==:GWXnnnKJxQ==', formats.registry!),
    ).toBe('hunter2');
  });

  it('refuses another key, a tampered value or another format', () => {
    const sealed = sealText(key, 'secret', formats.instance!);
    expect(() => openText(Buffer.alloc(32, 8), sealed, formats.instance!)).toThrow();
    const parts = sealed.split(':');
    parts[3] = Buffer.from('secreT').toString('base64');
    expect(() => openText(key, parts.join(':'), formats.instance!)).toThrow();
    expect(() => openText(key, sealed, formats.tfa!)).toThrow(/unknown sealed format/);
  });
});
