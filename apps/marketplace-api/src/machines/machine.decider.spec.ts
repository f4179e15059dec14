import type { MachineEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import {
  HEARTBEAT_INTERVAL_S,
  MachineErrors,
  machineDecider,
  reliabilityOf,
  slotOf,
} from './machine.decider';
import { AT, ask, hardware } from '../read-models/testing/events';

const registered: MachineEvent = {
  type: 'MachineRegistered',
  data: { machineId: 7, ownerId: 3, hardware, dlperf: 174.4, tflops: 330.4, registeredAt: AT },
};
const listed: MachineEvent = { type: 'MachineListed', data: { machineId: 7, ownerId: 3, ask, listedAt: AT } };
const spec = deciderSpec(machineDecider);

describe('machine decider', () => {
  it('registers a new machine to its owner', () => {
    spec
      .given([])
      .when({
        type: 'RegisterMachine',
        at: AT,
        machineId: 7,
        ownerId: 3,
        hardware,
        dlperf: 174.4,
        tflops: 330.4,
      })
      .then([registered]);
  });

  it('refuses a second registration of the same id', () => {
    spec
      .given([registered])
      .when({ type: 'RegisterMachine', at: AT, machineId: 7, ownerId: 3, hardware, dlperf: 1, tflops: 1 })
      .thenThrows(MachineErrors.exists);
  });

  it('lists (prices) a machine for its owner only', () => {
    spec.given([registered]).when({ type: 'ListMachine', at: AT, requesterId: 3, ask }).then([listed]);
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 4, ask })
      .thenThrows(MachineErrors.notFound);
    spec
      .given([])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask })
      .thenThrows(MachineErrors.notFound);
  });

  it('re-listing changes only the prices given: unset ones (null from the CLI) keep their values', () => {
    const withEnd = { ...ask, endDate: 1_900_000_000 };
    spec
      .given([
        registered,
        { type: 'MachineListed', data: { machineId: 7, ownerId: 3, ask: withEnd, listedAt: AT } },
      ])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { priceGpu: 0.9 } })
      .then([
        {
          type: 'MachineListed',
          data: { machineId: 7, ownerId: 3, ask: { ...withEnd, priceGpu: 0.9 }, listedAt: AT },
        },
      ]);
  });

  it('a first listing needs a GPU price; the rest default (min bid = the GPU price)', () => {
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { priceDisk: 0.1 } })
      .thenThrows(MachineErrors.invalidAsk);
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { priceGpu: 0.4 } })
      .then([
        {
          type: 'MachineListed',
          data: {
            machineId: 7,
            ownerId: 3,
            ask: {
              priceGpu: 0.4,
              priceDisk: 0,
              priceInetUp: 0,
              priceInetDown: 0,
              minBid: 0.4,
              minChunk: 1,
              endDate: null,
              creditDiscountMax: 0,
              duration: null,
              volSize: null,
              volPrice: null,
            },
            listedAt: AT,
          },
        },
      ]);
  });

  it('turns a duration such as "3 months" into an end date when none is given', () => {
    const endDate = Date.parse(AT) / 1000 + 90 * 86400;
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { ...ask, duration: '3 months' } })
      .then([
        {
          type: 'MachineListed',
          data: { machineId: 7, ownerId: 3, ask: { ...ask, duration: '3 months', endDate }, listedAt: AT },
        },
      ]);
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { ...ask, duration: 'soon' } })
      .thenThrows(MachineErrors.invalidAsk);
  });

  it('refuses negative prices and a min_chunk below 1', () => {
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { ...ask, priceGpu: -1 } })
      .thenThrows(MachineErrors.invalidAsk);
    spec
      .given([registered])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask: { ...ask, minChunk: 0 } })
      .thenThrows(MachineErrors.invalidAsk);
  });

  it('unlists a listed machine; unlisting again changes nothing', () => {
    spec
      .given([registered, listed])
      .when({ type: 'UnlistMachine', at: AT, requesterId: 3 })
      .then([{ type: 'MachineUnlisted', data: { machineId: 7, unlistedAt: AT } }]);
    spec.given([registered]).when({ type: 'UnlistMachine', at: AT, requesterId: 3 }).thenNothingHappened();
  });

  it('changes the min bid of a priced machine', () => {
    spec
      .given([registered, listed])
      .when({ type: 'SetMinBid', at: AT, requesterId: 3, minBid: 0.2 })
      .then([{ type: 'MinBidChanged', data: { machineId: 7, minBid: 0.2 } }]);
    spec
      .given([registered, listed])
      .when({ type: 'SetMinBid', at: AT, requesterId: 3, minBid: 0.3 })
      .thenNothingHappened();
    spec
      .given([registered])
      .when({ type: 'SetMinBid', at: AT, requesterId: 3, minBid: 0.2 })
      .thenThrows(MachineErrors.invalidAsk);
  });

  it('sets the verification status once per change', () => {
    spec
      .given([registered])
      .when({ type: 'SetVerification', at: AT, verification: 'verified' })
      .then([{ type: 'MachineVerificationChanged', data: { machineId: 7, verification: 'verified' } }]);
    spec
      .given([
        registered,
        { type: 'MachineVerificationChanged', data: { machineId: 7, verification: 'verified' } },
      ])
      .when({ type: 'SetVerification', at: AT, verification: 'verified' })
      .thenNothingHappened();
  });

  it('records an event for a heartbeat only when it moves the reliability, and only from the owner', () => {
    const later = new Date(Date.parse(AT) + 2 * HEARTBEAT_INTERVAL_S * 1000).toISOString();
    spec
      .given([registered])
      .when({ type: 'RecordHeartbeat', at: later, requesterId: 3, reliability: 0.3333 })
      .then([{ type: 'MachineReliabilityChanged', data: { machineId: 7, at: later, reliability: 0.3333 } }]);
    spec
      .given([
        registered,
        { type: 'MachineReliabilityChanged', data: { machineId: 7, at: later, reliability: 0.3333 } },
      ])
      .when({ type: 'RecordHeartbeat', at: later, requesterId: 3, reliability: 0.3333 })
      .thenNothingHappened();
    spec
      .given([registered])
      .when({ type: 'RecordHeartbeat', at: later, requesterId: 4, reliability: 1 })
      .thenThrows(MachineErrors.notFound);
  });

  it('deletes an idle machine for its owner only, unlisting it (and its volume space) first; then it is gone', () => {
    const volumeSpace: MachineEvent = {
      type: 'VolumeSpaceListed',
      data: { machineId: 7, ownerId: 3, sizeGb: 100, priceDisk: 0.1, endDate: null, listedAt: AT },
    };
    const deleted: MachineEvent = {
      type: 'MachineDeleted',
      data: { machineId: 7, ownerId: 3, deletedAt: AT },
    };
    spec
      .given([registered, listed, volumeSpace])
      .when({ type: 'DeleteMachine', at: AT, requesterId: 3, renterInstances: 0 })
      .then([
        { type: 'MachineUnlisted', data: { machineId: 7, unlistedAt: AT } },
        { type: 'VolumeSpaceUnlisted', data: { machineId: 7, unlistedAt: AT } },
        deleted,
      ]);
    spec
      .given([registered])
      .when({ type: 'DeleteMachine', at: AT, requesterId: 3, renterInstances: 0 })
      .then([deleted]);
    spec
      .given([registered, listed])
      .when({ type: 'DeleteMachine', at: AT, requesterId: 3, renterInstances: 2 })
      .thenThrows(MachineErrors.inUse);
    spec
      .given([registered])
      .when({ type: 'DeleteMachine', at: AT, requesterId: 4, renterInstances: 0 })
      .thenThrows(MachineErrors.notFound);
    spec
      .given([registered, deleted])
      .when({ type: 'ListMachine', at: AT, requesterId: 3, ask })
      .thenThrows(MachineErrors.notFound);
  });
});

describe('reliability of a silent machine (the reliability sweep)', () => {
  const after = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
  // registered at AT, heartbeats (events from before machine_liveness) in its first two intervals: reliability 1
  const beats: MachineEvent[] = [0, 1].map((i) => ({
    type: 'MachineHeartbeat',
    data: { machineId: 7, at: after(i * HEARTBEAT_INTERVAL_S), reliability: 1 },
  }));

  it('records the lower score of a silent machine (2 intervals seen of the 10 elapsed)', () => {
    expect(
      reliabilityOf(
        [0, 1].map((i) => slotOf(Date.parse(after(i * 60)) / 1000)),
        Date.parse(AT) / 1000,
        Date.parse(after(9 * 60)) / 1000,
      ),
    ).toBe(0.2);
    spec
      .given([registered, ...beats])
      .when({ type: 'RecomputeReliability', at: after(9 * HEARTBEAT_INTERVAL_S), reliability: 0.2 })
      .then([
        {
          type: 'MachineReliabilityChanged',
          data: { machineId: 7, at: after(9 * HEARTBEAT_INTERVAL_S), reliability: 0.2 },
        },
      ]);
  });

  it('changes nothing when the score has not moved, or for a machine that does not exist', () => {
    spec
      .given([registered, ...beats])
      .when({ type: 'RecomputeReliability', at: after(HEARTBEAT_INTERVAL_S), reliability: 1 })
      .thenNothingHappened();
    spec.given([]).when({ type: 'RecomputeReliability', at: AT, reliability: 0 }).thenNothingHappened();
  });
});

describe('reliability over the rolling window', () => {
  const start = Date.parse(AT) / 1000;
  it('is 1 with a heartbeat in every interval, and drops with gaps', () => {
    const every = Array.from({ length: 10 }, (_, i) => Math.floor(start / HEARTBEAT_INTERVAL_S) + i);
    expect(reliabilityOf(every, start, start + 9 * HEARTBEAT_INTERVAL_S)).toBe(1);
    expect(
      reliabilityOf(
        every.filter((_, i) => i % 2 === 0),
        start,
        start + 9 * HEARTBEAT_INTERVAL_S,
      ),
    ).toBe(0.5);
  });

  it('forgets heartbeats older than the window', () => {
    const old = [Math.floor(start / HEARTBEAT_INTERVAL_S)];
    expect(reliabilityOf(old, start, start + 3 * 24 * 3600)).toBe(0);
  });
});
