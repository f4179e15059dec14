import { RegistryLoginBox, templateLoginScope } from './registry-login';

describe('sealed registry passwords', () => {
  const box = new RegistryLoginBox(Buffer.alloc(32, 7));

  it('seal so that only the same key and the same template open them', () => {
    const sealed = box.seal('hunter2', templateLoginScope(1));
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain('hunter2');
    expect(box.seal('hunter2', templateLoginScope(1))).not.toBe(sealed);
    expect(box.open(sealed, templateLoginScope(1))).toBe('hunter2');
    expect(box.open(sealed, templateLoginScope(2))).toBeNull();
    expect(new RegistryLoginBox(Buffer.alloc(32, 8)).open(sealed, templateLoginScope(1))).toBeNull();
  });

  it('leave no password empty and read a legacy clear value as it is', () => {
    expect(box.seal('', templateLoginScope(1))).toBe('');
    expect(box.open('old-clear', templateLoginScope(1))).toBe('old-clear');
  });

  it('take a 32-byte key from configuration and require one in production', () => {
    expect(() => RegistryLoginBox.fromConfig('ab'.repeat(32), {})).not.toThrow();
    expect(() => RegistryLoginBox.fromConfig('abcd', {})).toThrow(/32 bytes/);
    expect(() => RegistryLoginBox.fromConfig(undefined, { NODE_ENV: 'production' })).toThrow(/required/);
  });
});
