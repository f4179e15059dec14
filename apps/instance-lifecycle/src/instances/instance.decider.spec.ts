import type { InstanceEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { InstanceErrors, instanceDecider } from './instance.decider';
import { AT, billing, created, data, destroyed, opened, state } from './testing/instance-fixtures';

const spec = deciderSpec(instanceDecider);

describe('instance decider', () => {
  it('creates an instance, provisioning (actual_status null)', () => {
    spec
      .given([])
      .when({ type: 'CreateInstance', at: AT, ...data })
      .then(opened);
    expect(instanceDecider.evolve(instanceDecider.initialState(), created)).toMatchObject({
      status: 'active',
      actual: null,
      intended: 'running',
    });
    spec
      .given([created])
      .when({ type: 'CreateInstance', at: AT, ...data })
      .thenThrows(InstanceErrors.exists);
  });

  it('moves null -> loading -> running on host reports, with the SSH endpoint', () => {
    spec
      .given(opened)
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'loading' })
      .then([state('loading')]);
    spec
      .given([...opened, state('loading')])
      .when({
        type: 'ReportHostState',
        at: AT,
        actualStatus: 'running',
        sshHost: 'h',
        sshPort: 2222,
        ports: { '22/tcp': 2222 },
      })
      .then([
        {
          type: 'InstanceStateChanged',
          data: {
            instanceId: 7,
            actualStatus: 'running',
            sshHost: 'h',
            sshPort: 2222,
            ports: { '22/tcp': 2222 },
            statusMsg: null,
            at: AT,
          },
        },
        // Compute is billed from the host's running report: an instance that never ran pays its disk only.
        billing('compute', 2_000_000),
      ]);
    spec
      .given([...opened, state('loading')])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'loading' })
      .thenNothingHappened();
  });

  it('stops (compute billing ends, storage goes on) and starts again by intent; the same intent twice changes nothing', () => {
    const running = [...opened, state('loading'), state('running'), billing('compute', 2_000_000)];
    const stop: InstanceEvent = {
      type: 'InstanceIntentChanged',
      data: { instanceId: 7, intendedStatus: 'stopped', at: AT },
    };
    const stopped = [...running, stop, billing('storage', 500_000)];
    spec
      .given(running)
      .when({ type: 'SetIntendedState', at: AT, requesterId: 2, state: 'stopped' })
      .then([stop, billing('storage', 500_000)]);
    spec
      .given(stopped)
      .when({ type: 'SetIntendedState', at: AT, requesterId: 2, state: 'stopped' })
      .thenNothingHappened();
    spec
      .given([...stopped, state('stopped')])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'running' })
      .then([state('running')]);
    // Compute billing resumes when the host really runs it again, not at the request nor while it loads.
    const start: InstanceEvent = {
      type: 'InstanceIntentChanged',
      data: { instanceId: 7, intendedStatus: 'running', at: AT },
    };
    spec
      .given([...stopped, state('stopped')])
      .when({ type: 'SetIntendedState', at: AT, requesterId: 2, state: 'running' })
      .then([start]);
    spec
      .given([...stopped, state('stopped'), start])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'loading' })
      .then([state('loading')]);
    spec
      .given([...stopped, state('stopped'), start, state('loading')])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'running' })
      .then([state('running'), billing('compute', 2_000_000)]);
  });

  it('bills storage only once the container exits, and nothing once destroyed', () => {
    spec
      .given([...opened, state('running'), billing('compute', 2_000_000)])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'exited' })
      .then([state('exited'), billing('storage', 500_000)]);
    spec
      .given([...opened, state('running')])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 2 })
      .then([destroyed, billing('none', 0)]);
  });

  it.each(['exited', 'unknown', 'offline'] as const)('never reaches running from %s', (dead) => {
    spec
      .given([...opened, state(dead)])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'running' })
      .thenThrows(InstanceErrors.invalidReport);
    spec
      .given([...opened, state(dead)])
      .when({ type: 'SetIntendedState', at: AT, requesterId: 2, state: 'running' })
      .thenThrows(InstanceErrors.cannotStart);
  });

  it('reboots and recycles a running instance only', () => {
    spec
      .given([...opened, state('running'), billing('compute', 2_000_000)])
      .when({ type: 'RestartInstance', at: AT, requesterId: 2, recycle: true })
      .then([{ type: 'InstanceRestarted', data: { instanceId: 7, recycle: true, at: AT } }]);
    spec
      .given([created, state('exited')])
      .when({ type: 'RestartInstance', at: AT, requesterId: 2, recycle: false })
      .thenThrows(InstanceErrors.cannotStart);
    const stop: InstanceEvent = {
      type: 'InstanceIntentChanged',
      data: { instanceId: 7, intendedStatus: 'stopped', at: AT },
    };
    spec
      .given([created, stop])
      .when({ type: 'RestartInstance', at: AT, requesterId: 2, recycle: false })
      .thenThrows(InstanceErrors.notRunning);
    spec
      .given([created])
      .when({ type: 'RestartInstance', at: AT, requesterId: 9, recycle: false })
      .thenThrows(InstanceErrors.notFound);
  });

  it('updates the config of a live instance (vastai update instance): the changes only, with the template id', () => {
    const changes = { image: 'busybox:1.36', env: { GREETING: 'bonjour' }, onstart: 'echo hi' };
    spec
      .given([...opened, state('running'), billing('compute', 2_000_000)])
      .when({ type: 'UpdateInstanceConfig', at: AT, requesterId: 2, changes, templateId: null })
      .then([{ type: 'InstanceConfigUpdated', data: { instanceId: 7, changes, at: AT } }]);
    // a stopped instance too (its container is recreated, not started); a template's id is recorded
    const stop: InstanceEvent = {
      type: 'InstanceIntentChanged',
      data: { instanceId: 7, intendedStatus: 'stopped', at: AT },
    };
    spec
      .given([...opened, stop, billing('storage', 500_000)])
      .when({
        type: 'UpdateInstanceConfig',
        at: AT,
        requesterId: 2,
        changes: { templateHashId: 'abc', image: 'x' },
        templateId: 5,
      })
      .then([
        {
          type: 'InstanceConfigUpdated',
          data: { instanceId: 7, changes: { templateHashId: 'abc', image: 'x' }, templateId: 5, at: AT },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateInstanceConfig', at: AT, requesterId: 2, changes: {}, templateId: null })
      .thenThrows(InstanceErrors.nothingToUpdate);
    spec
      .given([created, state('exited')])
      .when({ type: 'UpdateInstanceConfig', at: AT, requesterId: 2, changes, templateId: null })
      .thenThrows(InstanceErrors.cannotStart);
    // another renter's instance, and a destroyed one, are missing
    spec
      .given([created])
      .when({ type: 'UpdateInstanceConfig', at: AT, requesterId: 9, changes, templateId: null })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([created, destroyed])
      .when({ type: 'UpdateInstanceConfig', at: AT, requesterId: 2, changes, templateId: null })
      .thenThrows(InstanceErrors.notFound);
  });

  it('marks an interruptible instance outbid (stopped, once) and changes its bid', () => {
    const bid: InstanceEvent = {
      type: 'InstanceCreated',
      data: { ...data, dphTotal: 1, bidPrice: 1, createdAt: AT },
    };
    const outbid: InstanceEvent = {
      type: 'InstanceOutbid',
      data: { instanceId: 7, machineId: 3, numGpus: 4, at: AT },
    };
    const bidRunning = [bid, billing('compute', 1_000_000), state('running')];
    spec
      .given(bidRunning)
      .when({ type: 'MarkOutbid', at: AT })
      .then([outbid, billing('storage', 500_000)]);
    spec
      .given([...bidRunning, outbid, billing('storage', 500_000)])
      .when({ type: 'MarkOutbid', at: AT })
      .thenNothingHappened();
    expect(
      instanceDecider.evolve(instanceDecider.evolve(instanceDecider.initialState(), bid), outbid),
    ).toMatchObject({ intended: 'stopped', outbid: true });
    // A running bid is billed at its new price from the change on.
    spec
      .given(bidRunning)
      .when({ type: 'ChangeBid', at: AT, requesterId: 2, price: 1.5 })
      .then([
        { type: 'InstanceBidChanged', data: { instanceId: 7, price: 1.5, at: AT } },
        billing('compute', 1_500_000),
      ]);
    spec
      .given([created])
      .when({ type: 'ChangeBid', at: AT, requesterId: 2, price: 1.5 })
      .thenThrows(InstanceErrors.notABid);
  });

  it('labels', () => {
    spec
      .given(opened)
      .when({ type: 'LabelInstance', at: AT, requesterId: 2, label: 'x' })
      .then([{ type: 'InstanceLabelled', data: { instanceId: 7, label: 'x', at: AT } }]);
  });

  it('destroys once, then succeeds again with nothing new (idempotent)', () => {
    spec
      .given([...opened, state('running')])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 2 })
      .then([destroyed, billing('none', 0)]);
    spec
      .given([created, destroyed])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 2 })
      .thenNothingHappened();
    spec
      .given([created, destroyed])
      .when({ type: 'ReportHostState', at: AT, actualStatus: 'running' })
      .thenNothingHappened();
    spec
      .given([created, destroyed])
      .when({ type: 'SetIntendedState', at: AT, requesterId: 2, state: 'stopped' })
      .thenThrows(InstanceErrors.notFound);
  });

  it("reports another renter's instance (and an unknown one) as missing", () => {
    spec
      .given([created])
      .when({ type: 'SetIntendedState', at: AT, requesterId: 9, state: 'stopped' })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([created])
      .when({ type: 'LabelInstance', at: AT, requesterId: 9, label: 'x' })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([created])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 9 })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([created, destroyed])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 9 })
      .thenThrows(InstanceErrors.notFound);
    spec
      .given([])
      .when({ type: 'DestroyInstance', at: AT, requesterId: 2 })
      .thenThrows(InstanceErrors.notFound);
  });

  it("cleans up (machine's owner only) an instance whose contract ended and which no longer runs", () => {
    const ended = Date.parse(AT) / 1000 - 60;
    const stopped: InstanceEvent = {
      type: 'InstanceIntentChanged',
      data: { instanceId: 7, intendedStatus: 'stopped', at: AT },
    };
    spec
      .given([...opened, stopped])
      .when({ type: 'ExpireInstance', at: AT, hostId: 1, contractEnd: ended })
      .then([destroyed, billing('none', 0)]);
    spec
      .given([...opened, state('exited')])
      .when({ type: 'ExpireInstance', at: AT, hostId: 1, contractEnd: ended })
      .then([destroyed, billing('none', 0)]);
    // still running, contract not ended, or open-ended: left alone
    spec
      .given([...opened, state('running'), billing('compute', 2_000_000)])
      .when({ type: 'ExpireInstance', at: AT, hostId: 1, contractEnd: ended })
      .thenNothingHappened();
    spec
      .given([...opened, stopped])
      .when({ type: 'ExpireInstance', at: AT, hostId: 1, contractEnd: ended + 3600 })
      .thenNothingHappened();
    spec
      .given([...opened, stopped])
      .when({ type: 'ExpireInstance', at: AT, hostId: 1, contractEnd: null })
      .thenNothingHappened();
    spec
      .given([...opened, stopped])
      .when({ type: 'ExpireInstance', at: AT, hostId: 2, contractEnd: ended })
      .thenThrows(InstanceErrors.notFound);
  });
});
