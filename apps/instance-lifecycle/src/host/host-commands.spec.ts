import type { InstanceConfig, InstanceEvent } from '@rigmarket/contracts';
import { instanceConfig } from '@rigmarket/testing';
import { OUTBID_MSG } from '../read-models/instances/status-messages';
import { type CreateInstanceData, instanceDecider } from '../instances/instance.decider';
import { hostCommandsFor } from './host-commands';

const AT = '2026-05-01T12:00:00.000Z';
const config = instanceConfig();
const data: CreateInstanceData = {
  instanceId: 7,
  renter: 2,
  machineId: 3,
  hostId: 1,
  offerId: 3001,
  numGpus: 1,
  gpuName: 'RTX 4090',
  dphTotal: 1,
  storageDph: 0.1,
  bidPrice: 1,
  label: null,
  targetState: 'running',
  config,
  templateId: null,
};
const created = (c: InstanceConfig = config): InstanceEvent => ({
  type: 'InstanceCreated',
  data: { ...data, config: c, createdAt: AT },
});
const fold = (events: InstanceEvent[]) =>
  events.reduce(instanceDecider.evolve, instanceDecider.initialState());
const intent = (intendedStatus: 'running' | 'stopped'): InstanceEvent => ({
  type: 'InstanceIntentChanged',
  data: { instanceId: 7, intendedStatus, at: AT },
});

describe('host commands derived from instance events', () => {
  it('a new instance is provisioned; one waiting for its volume only once the volume is attached', () => {
    expect(hostCommandsFor(fold([]), [created()])).toEqual([{ kind: 'provision' }]);
    const waiting = created({ ...config, newVolume: { sizeGb: 10, mountPath: '/data' } } as InstanceConfig);
    expect(hostCommandsFor(fold([]), [waiting])).toEqual([]);
    // Its intent changes while it waits reach the host with the provision, not as stop/start.
    expect(hostCommandsFor(fold([waiting]), [intent('stopped')])).toEqual([]);
    const attached: InstanceEvent = {
      type: 'InstanceVolumeAttached',
      data: { instanceId: 7, volumeId: 9, mountPath: '/data', at: AT },
    };
    expect(hostCommandsFor(fold([waiting]), [attached])).toEqual([{ kind: 'provision' }]);
  });

  it('intents, outbids, restarts and destroys become stop, start, reboot/recycle and destroy, in order', () => {
    const before = fold([created()]);
    expect(
      hostCommandsFor(before, [
        intent('stopped'),
        intent('running'),
        { type: 'InstanceRestarted', data: { instanceId: 7, recycle: true, at: AT } },
        { type: 'InstanceOutbid', data: { instanceId: 7, machineId: 3, numGpus: 1, at: AT } },
        { type: 'InstanceDestroyed', data: { instanceId: 7, renter: 2, machineId: 3, numGpus: 1, at: AT } },
      ]),
    ).toEqual([
      { kind: 'stop' },
      { kind: 'start' },
      { kind: 'recycle' },
      { kind: 'stop', statusMsg: OUTBID_MSG },
      { kind: 'destroy' },
    ]);
  });

  it('a stop the renter did not ask for carries why; host reports and labels command nothing', () => {
    const before = fold([created()]);
    expect(hostCommandsFor(before, [intent('stopped')], 'out of credit')).toEqual([
      { kind: 'stop', statusMsg: 'out of credit' },
    ]);
    expect(
      hostCommandsFor(before, [
        {
          type: 'InstanceStateChanged',
          data: {
            instanceId: 7,
            actualStatus: 'running',
            sshHost: null,
            sshPort: null,
            ports: {},
            statusMsg: null,
            at: AT,
          },
        },
        { type: 'InstanceLabelled', data: { instanceId: 7, label: 'x', at: AT } },
      ]),
    ).toEqual([]);
  });

  it('a snapshot asked for becomes a snapshot command; its outcome (reported by the host) commands nothing', () => {
    const before = fold([created()]);
    const requested: InstanceEvent = {
      type: 'InstanceSnapshotRequested',
      data: { instanceId: 7, snapshotId: 1, image: '127.0.0.1:5000/a/b:latest', pause: true, at: AT },
    };
    expect(hostCommandsFor(before, [requested])).toEqual([{ kind: 'snapshot' }]);
    const failed: InstanceEvent = {
      type: 'InstanceSnapshotFailed',
      data: { instanceId: 7, snapshotId: 1, reason: 'unauthorized', at: AT },
    };
    expect(hostCommandsFor(fold([created(), requested]), [failed])).toEqual([]);
  });

  it('an attached or detached SSH key sends the whole key list (ssh_keys); one waiting for its volume gets it with its provision', () => {
    const key = (keyId: number): InstanceEvent => ({
      type: 'InstanceSshKeyAttached',
      data: { instanceId: 7, keyId, publicKey: `ssh-ed25519 AAAA k${keyId}`, at: AT },
    });
    const detach: InstanceEvent = {
      type: 'InstanceSshKeyDetached',
      data: { instanceId: 7, keyId: 1, at: AT },
    };
    expect(hostCommandsFor(fold([created()]), [key(1)])).toEqual([{ kind: 'ssh_keys' }]);
    expect(hostCommandsFor(fold([created(), key(1)]), [detach])).toEqual([{ kind: 'ssh_keys' }]);
    const waiting = created({ ...config, newVolume: { sizeGb: 10, mountPath: '/data' } } as InstanceConfig);
    expect(hostCommandsFor(fold([waiting]), [key(1)])).toEqual([]);
  });

  it('an updated config recreates the container (update); one waiting for its volume gets it with its provision', () => {
    const updated: InstanceEvent = {
      type: 'InstanceConfigUpdated',
      data: { instanceId: 7, changes: { env: { A: '1' } }, at: AT },
    };
    expect(hostCommandsFor(fold([created()]), [updated])).toEqual([{ kind: 'update' }]);
    const waiting = created({ ...config, newVolume: { sizeGb: 10, mountPath: '/data' } } as InstanceConfig);
    expect(hostCommandsFor(fold([waiting]), [updated])).toEqual([]);
  });
});
