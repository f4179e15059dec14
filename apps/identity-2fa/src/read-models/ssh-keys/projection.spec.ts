import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { sshKeysProjection } from './projection';

const at = (minute: number) => `2026-05-01T12:0${minute}:00.000Z`;

describe('ssh_keys projection', () => {
  const spec = projectionSpec(identityContext, sshKeysProjection);
  afterAll(() => spec.close());

  it('keeps each key with its latest text; a deleted one keeps its row, marked', () =>
    spec
      .given([
        {
          streamId: 'ssh_key-1',
          type: 'SshKeyAdded',
          data: { keyId: 1, userId: 2, publicKey: 'k1', at: at(0) },
        },
        {
          streamId: 'ssh_key-2',
          type: 'SshKeyAdded',
          data: { keyId: 2, userId: 2, publicKey: 'k2', at: at(1) },
        },
        { streamId: 'ssh_key-1', type: 'SshKeyReplaced', data: { keyId: 1, publicKey: 'k1b', at: at(2) } },
      ])
      .when({ streamId: 'ssh_key-2', type: 'SshKeyDeleted', data: { keyId: 2, at: at(3) } })
      .then(
        `SELECT key_id, user_id, public_key, deleted_at IS NOT NULL AS deleted FROM identity.ssh_keys ORDER BY key_id`,
        [
          { key_id: 1, user_id: 2, public_key: 'k1b', deleted: false },
          { key_id: 2, user_id: 2, public_key: 'k2', deleted: true },
        ],
      ));
});
