import { open, seal } from './idempotency';

describe('idempotency records keep the instance key sealed', () => {
  const instanceKey = 'a'.repeat(24) + '0123456789abcdef0123456789abcdef0123456789';

  it('opens with the same renter and Idempotency-Key', () => {
    const sealed = seal(instanceKey, 7, 'retry-me-1');
    expect(open(sealed, 7, 'retry-me-1')).toBe(instanceKey);
  });

  it('stores nothing readable, and a fresh nonce each time', () => {
    const a = seal(instanceKey, 7, 'retry-me-1');
    const b = seal(instanceKey, 7, 'retry-me-1');
    expect(a).not.toContain(instanceKey);
    expect(a).not.toContain('retry-me-1');
    expect(a).not.toBe(b);
  });

  it('does not open with another Idempotency-Key or for another renter, nor when tampered with', () => {
    const sealed = seal(instanceKey, 7, 'retry-me-1');
    expect(() => open(sealed, 7, 'retry-me-2')).toThrow();
    expect(() => open(sealed, 8, 'retry-me-1')).toThrow();
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3]!, 'base64');
    body[0] = body[0]! ^ 1;
    expect(() =>
      open([parts[0], parts[1], parts[2], body.toString('base64')].join(':'), 7, 'retry-me-1'),
    ).toThrow();
  });
});
