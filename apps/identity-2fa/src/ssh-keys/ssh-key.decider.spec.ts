import { deciderSpec, ed25519PublicKeyLine as ed25519Line } from '@rigmarket/testing';
import { parsePublicKey } from '@rigmarket/contracts';
import { sshKeyDecider } from './ssh-key.decider';
import type { SshKeyEvent } from './ssh-key.events';

const spec = deciderSpec(sshKeyDecider);
const at = '2026-01-01T00:00:00.000Z';
const key = ed25519Line();
const added: SshKeyEvent = { type: 'SshKeyAdded', data: { keyId: 4, userId: 3, publicKey: key, at } };

describe('SSH key', () => {
  it('is added to its account', () =>
    spec.given([]).when({ type: 'AddSshKey', keyId: 4, userId: 3, publicKey: key, at }).then([added]));

  it('is replaced by its owner; the same text again changes nothing', () => {
    const other = ed25519Line('other');
    spec
      .given([added])
      .when({ type: 'ReplaceSshKey', requesterUserId: 3, publicKey: other, at })
      .then([{ type: 'SshKeyReplaced', data: { keyId: 4, publicKey: other, at } }]);
    spec.given([added]).when({ type: 'ReplaceSshKey', requesterUserId: 3, publicKey: key, at }).then([]);
  });

  it('is no such key to another account, and once deleted', () => {
    spec
      .given([added])
      .when({ type: 'DeleteSshKey', requesterUserId: 9, at })
      .thenThrows('ssh_key_not_found');
    spec
      .given([added, { type: 'SshKeyDeleted', data: { keyId: 4, at } }])
      .when({ type: 'DeleteSshKey', requesterUserId: 3, at })
      .thenThrows('ssh_key_not_found');
  });
});

describe('an SSH public key line', () => {
  it('is accepted trimmed when its blob names its type', () => {
    expect(parsePublicKey(`  ${key}\n`)).toBe(key);
  });

  it.each([
    [
      'a private key',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
    ],
    ['a path', '~/.ssh/id_ed25519.pub'],
    ['an unknown type', key.replace('ssh-ed25519', 'ssh-dss')],
    ['a blob of another type', `ssh-rsa ${key.split(' ')[1]}`],
    ['two lines', `${key}\n${key}`],
    ['a truncated blob', key.slice(0, 30)],
    ['not a string', 42],
    ['too long', `ssh-ed25519 ${'A'.repeat(9000)}`],
  ])('refuses %s', (_what, raw) => {
    expect(() => parsePublicKey(raw)).toThrow(expect.objectContaining({ code: 'invalid_ssh_key' }));
  });
});
