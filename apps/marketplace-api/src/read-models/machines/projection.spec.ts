import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT, instanceCreated, machineListed, machineRegistered } from '../testing/events';
import { machinesProjection } from './projection';

/** Each machine registered, then listed. */
const listed = (...machineIds: number[]) =>
  machineIds.flatMap((machineId) => [machineRegistered(machineId), machineListed(machineId)]);

describe('machines projection (machines and their offers)', () => {
  const spec = projectionSpec(marketplaceContext, machinesProjection);
  afterAll(() => spec.close());

  it('offers a listed machine in power-of-two chunks and all its GPUs, at its min bid', () =>
    spec
      .given(listed(7))
      .when({ streamId: 'machine-7', type: 'MinBidChanged', data: { machineId: 7, minBid: 0.25 } })
      .then(`SELECT id::int AS id, num_gpus, dph_base, min_bid FROM marketplace.offers ORDER BY id`, [
        { id: 7001, num_gpus: 1, dph_base: 0.5, min_bid: 0.25 },
        { id: 7002, num_gpus: 2, dph_base: 1, min_bid: 0.5 },
        { id: 7004, num_gpus: 4, dph_base: 2, min_bid: 1 },
      ]));

  it('withdraws the offers when the machine is unlisted or deverified, and keeps the heartbeat time', () =>
    spec
      .given([
        ...listed(7, 8),
        { streamId: 'machine-7', type: 'MachineUnlisted', data: { machineId: 7, unlistedAt: AT } },
        { streamId: 'machine-8', type: 'MachineHeartbeat', data: { machineId: 8, at: AT, reliability: 0.9 } },
      ])
      .when({
        streamId: 'machine-8',
        type: 'MachineVerificationChanged',
        data: { machineId: 8, verification: 'deverified' },
      })
      .then(
        `SELECT machine_id, listed, verification, reliability, last_heartbeat_at IS NOT NULL AS beat,
                (SELECT count(*)::int FROM marketplace.offers o WHERE o.machine_id = m.machine_id) AS offers
           FROM marketplace.machines m ORDER BY 1`,
        [
          {
            machine_id: 7,
            listed: false,
            verification: 'unverified',
            reliability: 0,
            beat: false,
            offers: 0,
          },
          {
            machine_id: 8,
            listed: true,
            verification: 'deverified',
            reliability: 0.9,
            beat: true,
            offers: 0,
          },
        ],
      ));

  it('holds GPUs per live instance and offers only the free ones; an outbid instance lets them go until started', () =>
    spec
      .given([
        ...listed(7),
        instanceCreated(9, 7, 2),
        instanceCreated(10, 7, 1),
        instanceCreated(11, 7, 1),
        {
          streamId: 'instance-10',
          type: 'InstanceOutbid',
          data: { instanceId: 10, machineId: 7, numGpus: 1, at: AT },
        },
        {
          streamId: 'instance-11',
          type: 'InstanceOutbid',
          data: { instanceId: 11, machineId: 7, numGpus: 1, at: AT },
        },
        {
          streamId: 'instance-9',
          type: 'InstanceDestroyed',
          data: { instanceId: 9, renter: 2, machineId: 7, numGpus: 2, at: AT },
        },
      ])
      .when({
        streamId: 'instance-11',
        type: 'InstanceIntentChanged',
        data: { instanceId: 11, intendedStatus: 'running', at: AT },
      })
      .then(
        `SELECT (SELECT json_agg(json_build_array(instance_id, num_gpus, held) ORDER BY instance_id) FROM marketplace.instance_allocations) AS allocations,
                (SELECT json_agg(num_gpus ORDER BY num_gpus) FROM marketplace.offers WHERE machine_id = 7) AS offers`,
        [
          {
            allocations: [
              [10, 1, false],
              [11, 1, true],
            ],
            offers: [1, 2, 3],
          },
        ],
      ));

  it("keeps each instance's renter, leaves a host's default job out of the held GPUs, and drops a deleted machine", () =>
    spec
      .given([
        ...listed(7, 8),
        instanceCreated(9, 7, 2),
        {
          ...instanceCreated(10, 7, 2),
          data: { ...instanceCreated(10, 7, 2).data, renter: 1, defaultJob: true },
        },
        { streamId: 'machine-8', type: 'MachineUnlisted', data: { machineId: 8, unlistedAt: AT } },
      ])
      .when({
        streamId: 'machine-8',
        type: 'MachineDeleted',
        data: { machineId: 8, ownerId: 1, deletedAt: AT },
      })
      .then(
        `SELECT (SELECT json_agg(json_build_array(instance_id, renter_id, held) ORDER BY instance_id) FROM marketplace.instance_allocations) AS allocations,
                (SELECT json_agg(num_gpus ORDER BY num_gpus) FROM marketplace.offers WHERE machine_id = 7) AS offers,
                (SELECT json_agg(machine_id ORDER BY machine_id) FROM marketplace.machines) AS machines,
                (SELECT count(*)::int FROM marketplace.offers WHERE machine_id = 8) AS deleted_offers`,
        [{ allocations: [[9, 2, true]], offers: [1, 2], machines: [7], deleted_offers: 0 }],
      ));

  // The when events are also applied as one batch after the given ones (the spec helper): a delivery of rents
  // and ends on several machines, the same machine more than once, in runs of one type and mixed.
  it('offers the free GPUs of every machine a delivery of rents and ends touched', () =>
    spec
      .given([...listed(7, 8, 9), instanceCreated(20, 7, 1), instanceCreated(21, 8, 2)])
      .when(
        instanceCreated(22, 7, 2),
        instanceCreated(23, 8, 1),
        instanceCreated(24, 9, 4),
        {
          streamId: 'instance-20',
          type: 'InstanceDestroyed',
          data: { instanceId: 20, renter: 2, machineId: 7, numGpus: 1, at: AT },
        },
        {
          streamId: 'instance-24',
          type: 'InstanceDestroyed',
          data: { instanceId: 24, renter: 2, machineId: 9, numGpus: 4, at: AT },
        },
        {
          streamId: 'instance-22',
          type: 'InstanceOutbid',
          data: { instanceId: 22, machineId: 7, numGpus: 2, at: AT },
        },
        instanceCreated(26, 7, 1),
        instanceCreated(25, 9, 1),
      )
      .then(
        `SELECT machine_id, json_agg(num_gpus ORDER BY num_gpus) AS offers FROM marketplace.offers GROUP BY 1 ORDER BY 1`,
        [
          { machine_id: 7, offers: [1, 2, 3] },
          { machine_id: 8, offers: [1] },
          { machine_id: 9, offers: [1, 2, 3] },
        ],
      ));
});
