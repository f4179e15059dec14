import type { InstanceEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { InstanceErrors, instanceDecider, volumeFailedMsg } from './instance.decider';
import { AT, billing, config, data, destroyed, opened, state } from './testing/instance-fixtures';

const spec = deciderSpec(instanceDecider);

describe('instance decider with volume_info create_new (the volume is created by marketplace first)', () => {
  const newVolume = { volumeOfferId: 3, sizeGb: 30, name: null, mountPath: '/data' };
  const waiting: InstanceEvent = {
    type: 'InstanceCreated',
    data: { ...data, config: { ...config, newVolume }, createdAt: AT },
  };
  const opening = [waiting, billing('storage', 500_000)];
  const attached: InstanceEvent = {
    type: 'InstanceVolumeAttached',
    data: { instanceId: 7, volumeId: 55, mountPath: '/data', at: AT },
  };
  const attach = { type: 'AttachVolume' as const, at: AT, volumeId: 55, ownerId: 2, machineId: 3 };

  it('attaches the created volume at the requested mount path, once', () => {
    spec.given(opening).when(attach).then([attached]);
    spec
      .given([...opening, attached])
      .when(attach)
      .thenNothingHappened();
    // An instance rented without create_new waits for nothing.
    spec.given(opened).when(attach).thenNothingHappened();
  });

  it('refuses a volume of another renter or machine', () => {
    spec
      .given(opening)
      .when({ ...attach, ownerId: 9 })
      .thenThrows(InstanceErrors.volumeMismatch);
    spec
      .given(opening)
      .when({ ...attach, machineId: 4 })
      .thenThrows(InstanceErrors.volumeMismatch);
  });

  it('exits, billed for storage only, with a status_msg saying why, when the volume could not be created', () => {
    const exited: InstanceEvent = {
      type: 'InstanceStateChanged',
      data: {
        instanceId: 7,
        actualStatus: 'exited',
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: volumeFailedMsg('no space'),
        at: AT,
      },
    };
    spec.given(opening).when({ type: 'FailVolume', at: AT, reason: 'no space' }).then([exited]);
    expect(volumeFailedMsg('no space')).toContain('could not be created (no space)');
    // Repeated, or too late (attached, destroyed), it changes nothing; a late volume does not revive it.
    spec
      .given([...opening, exited])
      .when({ type: 'FailVolume', at: AT, reason: 'no space' })
      .thenNothingHappened();
    spec
      .given([...opening, attached])
      .when({ type: 'FailVolume', at: AT, reason: 'no space' })
      .thenNothingHappened();
    spec
      .given([...opening, exited])
      .when(attach)
      .thenNothingHappened();
    spec.given([waiting, destroyed]).when(attach).thenNothingHappened();
  });

  it('takes no host report while it waits: the host runs nothing for it yet', () => {
    spec
      .given(opening)
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'stopped' })
      .thenNothingHappened();
    spec
      .given([...opening, attached])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'loading' })
      .then([state('loading')]);
  });

  it('has no container to restart while it waits', () => {
    spec
      .given(opening)
      .when({ type: 'RestartInstance', at: AT, requesterId: 2, recycle: false })
      .thenThrows(InstanceErrors.waitingForVolume);
    spec
      .given([...opening, attached, state('running'), billing('compute', 2_000_000)])
      .when({ type: 'RestartInstance', at: AT, requesterId: 2, recycle: false })
      .then([{ type: 'InstanceRestarted', data: { instanceId: 7, recycle: false, at: AT } }]);
  });
});
