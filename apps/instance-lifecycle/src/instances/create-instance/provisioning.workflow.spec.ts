import { deciderSpec } from '@rigmarket/testing';
import {
  type ProvisioningEvent,
  ProvisioningErrors,
  type ProvisioningRequest,
  type ProvisioningState,
  evolve,
  initialState,
  nextOutput,
  provisioningWorkflow,
} from './provisioning.workflow';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(provisioningWorkflow);
const request: ProvisioningRequest = {
  instanceId: 9,
  renter: 2,
  machineId: 7,
  numGpus: 2,
  machineGpus: 4,
  bid: null,
};
const requested: ProvisioningEvent = { type: 'ProvisioningRequested', data: { ...request, at: AT } };
const allocated: ProvisioningEvent = {
  type: 'ProvisioningGpusAllocated',
  data: { instanceId: 9, machineId: 7, at: AT },
};
const created: ProvisioningEvent = { type: 'ProvisioningInstanceCreated', data: { instanceId: 9, at: AT } };
const failed = (reason: string): ProvisioningEvent => ({
  type: 'ProvisioningFailed',
  data: { instanceId: 9, reason, at: AT },
});
const released: ProvisioningEvent = {
  type: 'ProvisioningGpusReleased',
  data: { instanceId: 9, machineId: 7, at: AT },
};
const stateAfter = (events: ProvisioningEvent[]): ProvisioningState => events.reduce(evolve, initialState());

describe('provisioning workflow', () => {
  it('records the request first, then each step; each state names the output to act on next', () => {
    spec
      .given([])
      .when({ type: 'RequestProvisioning', ...request, at: AT })
      .then([requested]);
    expect(nextOutput(stateAfter([requested]))).toEqual({ type: 'AllocateGpus', request });
    spec.given([requested]).when({ type: 'RecordGpusAllocated', instanceId: 9, at: AT }).then([allocated]);
    expect(nextOutput(stateAfter([requested, allocated]))).toEqual({ type: 'CreateInstance', request });
    spec
      .given([requested, allocated])
      .when({ type: 'RecordInstanceCreated', instanceId: 9, at: AT })
      .then([created]);
    expect(nextOutput(stateAfter([requested, allocated, created]))).toBeNull();
  });

  it('records each input once: a repeated request or step outcome adds nothing', () => {
    spec
      .given([requested])
      .when({ type: 'RequestProvisioning', ...request, at: AT })
      .thenNothingHappened();
    spec
      .given([requested, allocated])
      .when({ type: 'RecordGpusAllocated', instanceId: 9, at: AT })
      .thenNothingHappened();
    spec
      .given([requested, allocated, created])
      .when({ type: 'RecordInstanceCreated', instanceId: 9, at: AT })
      .thenNothingHappened();
  });

  it('ends a rent refused before its GPUs were allocated: nothing to release', () => {
    spec
      .given([requested])
      .when({
        type: 'FailProvisioning',
        instanceId: 9,
        reason: 'GPUs not allocated: offer_unavailable',
        at: AT,
      })
      .then([failed('GPUs not allocated: offer_unavailable')]);
    expect(nextOutput(stateAfter([requested, failed('x')]))).toBeNull();
  });

  it('compensates a rent that failed (or was interrupted) after its GPUs were allocated: release them, then end', () => {
    spec
      .given([requested, allocated])
      .when({ type: 'FailProvisioning', instanceId: 9, reason: 'interrupted', at: AT })
      .then([failed('interrupted')]);
    expect(nextOutput(stateAfter([requested, allocated, failed('interrupted')]))).toEqual({
      type: 'ReleaseGpus',
      machineId: 7,
      instanceId: 9,
    });
    spec
      .given([requested, allocated, failed('interrupted')])
      .when({ type: 'RecordGpusReleased', instanceId: 9, at: AT })
      .then([released]);
    expect(nextOutput(stateAfter([requested, allocated, failed('interrupted'), released]))).toBeNull();
  });

  it('refuses a step outcome that comes after the rent was given up, so the step rolls back with it', () => {
    spec
      .given([requested, failed('interrupted')])
      .when({ type: 'RecordGpusAllocated', instanceId: 9, at: AT })
      .thenThrows(ProvisioningErrors.ended);
    spec
      .given([requested, allocated, failed('interrupted')])
      .when({ type: 'RecordInstanceCreated', instanceId: 9, at: AT })
      .thenThrows(ProvisioningErrors.ended);
    spec
      .given([requested, allocated, failed('interrupted'), released])
      .when({ type: 'RecordInstanceCreated', instanceId: 9, at: AT })
      .thenThrows(ProvisioningErrors.ended);
  });

  it('does not give up a completed rent, nor release twice', () => {
    spec
      .given([requested, allocated, created])
      .when({ type: 'FailProvisioning', instanceId: 9, reason: 'interrupted', at: AT })
      .thenNothingHappened();
    spec
      .given([requested, allocated, failed('interrupted'), released])
      .when({ type: 'FailProvisioning', instanceId: 9, reason: 'interrupted', at: AT })
      .thenNothingHappened();
    spec
      .given([requested, allocated, failed('interrupted'), released])
      .when({ type: 'RecordGpusReleased', instanceId: 9, at: AT })
      .thenNothingHappened();
  });
});
