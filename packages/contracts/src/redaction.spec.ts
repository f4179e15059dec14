import { isSecretFieldName, redactSecrets } from './redaction';

describe('redactSecrets', () => {
  it('drops secret, personal and script fields at any depth and keeps identifiers and the rest', () => {
    expect(
      redactSecrets({
        instanceId: 4,
        keyHash: 'ab',
        config: { image: 'busybox', env: '-e TOKEN=x', onstart: 'curl -H token', disk: 10 },
        methods: [{ id: 1, label: 'phone', secretSealed: 's', phoneNumber: '+1555' }],
        registry: { docker_login_pass: 'p', docker_login_user: 'me' },
        hashId: 'h1',
      }),
    ).toEqual({
      instanceId: 4,
      config: { image: 'busybox', disk: 10 },
      methods: [{ id: 1, label: 'phone' }],
      registry: { docker_login_user: 'me' },
      hashId: 'h1',
    });
  });

  it('names as secret what holds one, not what identifies one', () => {
    for (const name of ['password', 'keyHash', 'apiKey', 'backupCodes', 'email', 'sealedPassword', 'value'])
      expect(isSecretFieldName(name)).toBe(true);
    for (const name of ['keyId', 'hashId', 'sessionKeyId', 'label', 'status', 'renter'])
      expect(isSecretFieldName(name)).toBe(false);
  });
});
