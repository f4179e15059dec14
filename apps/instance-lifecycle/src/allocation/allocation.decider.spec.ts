import { deciderSpec } from '@rigmarket/testing';
import { type AllocationEvent, AllocationErrors, allocationDecider } from './allocation.decider';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(allocationDecider);
const allocated = (instanceId: number, numGpus: number): AllocationEvent => ({ type: 'GpusAllocated', data: { machineId: 3, instanceId, numGpus, at: AT } });

describe('allocation decider', () => {
  it('allocates free GPUs', () => {
    spec.given([]).when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 1, numGpus: 4, machineGpus: 4 }).then([allocated(1, 4)]);
    spec.given([allocated(1, 2)]).when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 2, numGpus: 2, machineGpus: 4 }).then([allocated(2, 2)]);
  });

  it('refuses GPUs already taken: the offer is no longer available', () => {
    spec.given([allocated(1, 4)]).when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 2, numGpus: 4, machineGpus: 4 }).thenThrows(AllocationErrors.unavailable);
    spec.given([allocated(1, 3)]).when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 2, numGpus: 2, machineGpus: 4 }).thenThrows(AllocationErrors.unavailable);
  });

  it('releases once, and the GPUs are free again', () => {
    const released: AllocationEvent = { type: 'GpusReleased', data: { machineId: 3, instanceId: 1, numGpus: 4, at: AT } };
    spec.given([allocated(1, 4)]).when({ type: 'ReleaseGpus', at: AT, machineId: 3, instanceId: 1 }).then([released]);
    spec.given([allocated(1, 4), released]).when({ type: 'ReleaseGpus', at: AT, machineId: 3, instanceId: 1 }).thenNothingHappened();
    spec.given([allocated(1, 4), released]).when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 2, numGpus: 4, machineGpus: 4 }).then([allocated(2, 4)]);
  });
});
