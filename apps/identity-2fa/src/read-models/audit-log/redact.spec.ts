import { auditArgs } from './redact';

describe('auditArgs (what an audit row shows of an event)', () => {
  it('keeps plain fields and drops anything named like a secret or personal data', () => {
    expect(
      auditArgs({
        instanceId: 12,
        keyId: 4,
        hashId: 'a1b2',
        label: 'train',
        running: true,
        note: null,
        keyHash: 'ab12',
        password: 'p',
        passwordHash: 'x',
        secretSealed: 's',
        sshKey: 'ssh-ed25519 AAAA',
        registryPassword: 'r',
        email: 'a@b.c',
        phoneNumber: '+15550100',
        backupCodeHashes: ['h'],
        env: '-e TOKEN=x',
        value: 'v',
        code: '123456',
      }),
    ).toEqual({ instanceId: 12, keyId: 4, hashId: 'a1b2', label: 'train', running: true, note: null });
  });

  it('drops nested objects, long text and non-finite numbers, and keeps at most 24 fields', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, i]));
    expect(Object.keys(auditArgs(many))).toHaveLength(24);
    expect(auditArgs({ a: { b: 1 }, list: [1], long: 'x'.repeat(201), n: Number.NaN, ok: 'y' })).toEqual({
      ok: 'y',
    });
    expect(auditArgs('text')).toEqual({});
    expect(auditArgs(null)).toEqual({});
  });
});
