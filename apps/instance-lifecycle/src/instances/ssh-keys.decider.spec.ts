import { type InstanceEvent, MAX_INSTANCE_SSH_KEYS } from '@rigmarket/contracts';
import { deciderSpec, ed25519PublicKeyLine } from '@rigmarket/testing';
import { InstanceErrors, instanceDecider } from './instance.decider';
import { AT, destroyed, opened } from './testing/instance-fixtures';

const spec = deciderSpec(instanceDecider);
const alice = ed25519PublicKeyLine('alice@laptop');
const bob = ed25519PublicKeyLine('bob@desk');
const attached = (keyId: number, publicKey: string): InstanceEvent => ({
  type: 'InstanceSshKeyAttached',
  data: { instanceId: 7, keyId, publicKey, at: AT },
});
const detached = (keyId: number): InstanceEvent => ({
  type: 'InstanceSshKeyDetached',
  data: { instanceId: 7, keyId, at: AT },
});
const fold = (events: InstanceEvent[]) =>
  events.reduce(instanceDecider.evolve, instanceDecider.initialState());

describe('instance decider: SSH keys (attach ssh / detach ssh)', () => {
  it('attaches a key with the next id of the instance; ids are never reused after a detach', () => {
    spec
      .given(opened)
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .then([attached(1, alice)]);
    spec
      .given([...opened, attached(1, alice), detached(1)])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: bob })
      .then([attached(2, bob)]);
    expect(fold([...opened, attached(1, alice), attached(2, bob), detached(1)])).toMatchObject({
      sshKeys: [{ keyId: 2, publicKey: bob }],
      nextSshKeyId: 3,
    });
  });

  it('attaching a key the instance already holds changes nothing', () => {
    spec
      .given([...opened, attached(1, alice)])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .thenNothingHappened();
  });

  it('detaches a key it holds; an unknown or already detached id is ssh_key_not_found', () => {
    spec
      .given([...opened, attached(1, alice), attached(2, bob)])
      .when({ type: 'DetachSshKey', at: AT, requesterId: 2, keyId: 1 })
      .then([detached(1)]);
    spec
      .given([...opened, attached(1, alice), detached(1)])
      .when({ type: 'DetachSshKey', at: AT, requesterId: 2, keyId: 1 })
      .thenThrows(InstanceErrors.sshKeyNotFound);
    spec
      .given(opened)
      .when({ type: 'DetachSshKey', at: AT, requesterId: 2, keyId: 5 })
      .thenThrows(InstanceErrors.sshKeyNotFound);
  });

  it('another account, a destroyed or an unknown instance is no_such_instance', () => {
    spec
      .given(opened)
      .when({ type: 'AttachSshKey', at: AT, requesterId: 99, publicKey: alice })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([...opened, attached(1, alice)])
      .when({ type: 'DetachSshKey', at: AT, requesterId: 99, keyId: 1 })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([...opened, destroyed])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .thenThrows(InstanceErrors.notFound);
  });

  it(`holds at most ${MAX_INSTANCE_SSH_KEYS} keys at once`, () => {
    const full = Array.from({ length: MAX_INSTANCE_SSH_KEYS }, (_, i) =>
      attached(i + 1, ed25519PublicKeyLine(`k${i}`)),
    );
    spec
      .given([...opened, ...full])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .thenThrows(InstanceErrors.tooManySshKeys);
    spec
      .given([...opened, ...full, detached(3)])
      .when({ type: 'AttachSshKey', at: AT, requesterId: 2, publicKey: alice })
      .then([attached(MAX_INSTANCE_SSH_KEYS + 1, alice)]);
  });
});
