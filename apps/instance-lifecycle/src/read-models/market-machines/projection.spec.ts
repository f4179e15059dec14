import type { MachineAsk, MachineHardware, MachineRegistered } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { marketMachinesProjection } from './projection';

const hardware = {
  gpuName: 'RTX 4090',
  numGpus: 4,
  gpuRamMb: 24564,
  publicIpaddr: '203.0.113.7',
  geolocation: 'US',
};
const ask = { priceGpu: 0.5, minBid: 0.3 } as MachineAsk;

describe('market_machines projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, marketMachinesProjection);
  afterAll(() => spec.close());

  it('knows each machine, its ask (with a changed min bid), listing and verification', () =>
    spec
      .given([
        {
          streamId: 'machine-7',
          type: 'MachineRegistered',
          data: {
            machineId: 7,
            ownerId: 3,
            hardware: hardware as MachineHardware,
          } as MachineRegistered['data'],
        },
        {
          streamId: 'machine-7',
          type: 'MachineListed',
          data: { machineId: 7, ownerId: 3, ask, listedAt: 'x' },
        },
        { streamId: 'machine-7', type: 'MinBidChanged', data: { machineId: 7, minBid: 0.2 } },
        {
          streamId: 'machine-7',
          type: 'MachineVerificationChanged',
          data: { machineId: 7, verification: 'verified' },
        },
      ])
      .when({ streamId: 'machine-7', type: 'MachineUnlisted', data: { machineId: 7, unlistedAt: 'x' } })
      .then(
        `SELECT machine_id, owner_id, gpu_name, num_gpus, gpu_ram, public_ipaddr, listed, ask, verification, geolocation
           FROM instance_lifecycle.market_machines`,
        [
          {
            machine_id: 7,
            owner_id: 3,
            gpu_name: 'RTX 4090',
            num_gpus: 4,
            gpu_ram: 24564,
            public_ipaddr: '203.0.113.7',
            listed: false,
            ask: { priceGpu: 0.5, minBid: 0.2 },
            verification: 'verified',
            geolocation: 'US',
          },
        ],
      ));

  it('forgets a deleted machine', () =>
    spec
      .given([
        {
          streamId: 'machine-7',
          type: 'MachineRegistered',
          data: {
            machineId: 7,
            ownerId: 3,
            hardware: hardware as MachineHardware,
          } as MachineRegistered['data'],
        },
        {
          streamId: 'machine-8',
          type: 'MachineRegistered',
          data: {
            machineId: 8,
            ownerId: 3,
            hardware: hardware as MachineHardware,
          } as MachineRegistered['data'],
        },
      ])
      .when({
        streamId: 'machine-7',
        type: 'MachineDeleted',
        data: { machineId: 7, ownerId: 3, deletedAt: 'x' },
      })
      .then(`SELECT machine_id FROM instance_lifecycle.market_machines`, [{ machine_id: 8 }]));
});
