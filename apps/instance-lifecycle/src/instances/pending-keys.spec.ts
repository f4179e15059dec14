import { PendingKeyBox } from './pending-keys';

describe('the instance key of an instance waiting for its volume', () => {
  const box = PendingKeyBox.fromConfig('ab'.repeat(32));
  const instanceKey = 'f'.repeat(64);

  it('is stored sealed, never in the clear, and opens for its own instance', () => {
    const sealed = box.seal(instanceKey, 41);
    expect(sealed).not.toContain(instanceKey);
    expect(box.open(sealed, 41)).toBe(instanceKey);
  });

  it('does not open under another seal key or for another instance', () => {
    const sealed = box.seal(instanceKey, 41);
    expect(box.open(sealed, 42)).toBeNull();
    expect(PendingKeyBox.fromConfig('cd'.repeat(32)).open(sealed, 41)).toBeNull();
  });

  it('refuses a malformed configured key, and a missing one in production', () => {
    expect(() => PendingKeyBox.fromConfig('abcd')).toThrow('32 bytes');
    expect(() => PendingKeyBox.fromConfig(undefined, { NODE_ENV: 'production' })).toThrow(
      'required in production',
    );
  });
});
