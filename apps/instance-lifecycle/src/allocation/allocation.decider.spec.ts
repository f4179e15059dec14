import { deciderSpec } from '@rigmarket/testing';
import { type AllocationEvent, AllocationErrors, allocationDecider } from './allocation.decider';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(allocationDecider);
const allocated = (instanceId: number, numGpus: number, bid: number | null = null): AllocationEvent => ({
  type: 'GpusAllocated',
  data: { machineId: 3, instanceId, numGpus, bid, at: AT },
});

describe('allocation decider', () => {
  it('allocates free GPUs', () => {
    spec
      .given([])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 1,
        numGpus: 4,
        machineGpus: 4,
        bid: null,
      })
      .then([allocated(1, 4)]);
    spec
      .given([allocated(1, 2)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 2,
        numGpus: 2,
        machineGpus: 4,
        bid: null,
      })
      .then([allocated(2, 2)]);
  });

  it('refuses GPUs already taken: the offer is no longer available', () => {
    spec
      .given([allocated(1, 4)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 2,
        numGpus: 4,
        machineGpus: 4,
        bid: null,
      })
      .thenThrows(AllocationErrors.unavailable);
    spec
      .given([allocated(1, 3)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 2,
        numGpus: 2,
        machineGpus: 4,
        bid: null,
      })
      .thenThrows(AllocationErrors.unavailable);
  });

  it('lets a higher bid or an on-demand rental take interruptible GPUs, lowest bid first', () => {
    const outbid = (instanceId: number, numGpus: number): AllocationEvent => ({
      type: 'GpusReleased',
      data: { machineId: 3, instanceId, numGpus, outbid: true, at: AT },
    });
    spec
      .given([allocated(1, 2, 0.5), allocated(2, 2, 0.4)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 3,
        numGpus: 2,
        machineGpus: 4,
        bid: 0.6,
      })
      .then([outbid(2, 2), allocated(3, 2, 0.6)]);
    spec
      .given([allocated(1, 2, 0.5), allocated(2, 2, 0.4)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 3,
        numGpus: 4,
        machineGpus: 4,
        bid: null,
      })
      .then([outbid(2, 2), outbid(1, 2), allocated(3, 4)]);
    spec
      .given([allocated(1, 2, 0.5), allocated(2, 2)])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 3,
        numGpus: 2,
        machineGpus: 4,
        bid: 0.5,
      })
      .thenThrows(AllocationErrors.unavailable);
    spec
      .given([allocated(1, 4)])
      .when({ type: 'AllocateGpus', at: AT, machineId: 3, instanceId: 3, numGpus: 1, machineGpus: 4, bid: 9 })
      .thenThrows(AllocationErrors.unavailable);
  });

  it('changes the bid of a holding', () => {
    spec
      .given([allocated(1, 2, 0.5)])
      .when({ type: 'ChangeBid', at: AT, machineId: 3, instanceId: 1, bid: 0.7 })
      .then([allocated(1, 2, 0.7)]);
    spec
      .given([])
      .when({ type: 'ChangeBid', at: AT, machineId: 3, instanceId: 1, bid: 0.7 })
      .thenNothingHappened();
  });

  it('releases once, and the GPUs are free again', () => {
    const released: AllocationEvent = {
      type: 'GpusReleased',
      data: { machineId: 3, instanceId: 1, numGpus: 4, at: AT },
    };
    spec
      .given([allocated(1, 4)])
      .when({ type: 'ReleaseGpus', at: AT, machineId: 3, instanceId: 1 })
      .then([released]);
    spec
      .given([allocated(1, 4), released])
      .when({ type: 'ReleaseGpus', at: AT, machineId: 3, instanceId: 1 })
      .thenNothingHappened();
    spec
      .given([allocated(1, 4), released])
      .when({
        type: 'AllocateGpus',
        at: AT,
        machineId: 3,
        instanceId: 2,
        numGpus: 4,
        machineGpus: 4,
        bid: null,
      })
      .then([allocated(2, 4)]);
  });
});
