import type { InstanceCreated, MachineAsk, MachineEvent, MachineHardware } from '@rigmarket/contracts';
import type { SpecEvent } from '@rigmarket/testing';

/** Events the read-model specs share. */
export const AT = '2026-05-01T12:00:00.000Z';

export const hardware: MachineHardware = {
  hostname: 'rig',
  gpuName: 'RTX 4090',
  numGpus: 4,
  gpuRamMb: 24564,
  cudaMaxGood: 12.4,
  driverVersion: '550.54.15',
  computeCap: 890,
  cpuName: 'EPYC',
  cpuCores: 32,
  cpuGhz: 2.8,
  cpuRamMb: 128000,
  diskSpaceGb: 2000,
  diskBwMbps: 3000,
  diskName: null,
  inetUpMbps: 900,
  inetDownMbps: 950,
  directPortCount: 100,
  publicIpaddr: null,
  geolocation: 'US',
  pcieGen: 4,
  pcieBwGbps: 24.5,
  hostingType: 0,
};

export const ask: MachineAsk = {
  priceGpu: 0.5,
  priceDisk: 0.15,
  priceInetUp: 0.01,
  priceInetDown: 0.01,
  minBid: 0.3,
  minChunk: 1,
  endDate: null,
  creditDiscountMax: 0.4,
  duration: null,
  volSize: null,
  volPrice: null,
};

export const machineRegistered = (machineId: number, ownerId = 3): SpecEvent<MachineEvent> => ({
  streamId: `machine-${machineId}`,
  type: 'MachineRegistered',
  data: { machineId, ownerId, hardware, dlperf: 174.4, tflops: 330.4, registeredAt: AT },
});

export const machineListed = (machineId: number, ownerId = 3): SpecEvent<MachineEvent> => ({
  streamId: `machine-${machineId}`,
  type: 'MachineListed',
  data: { machineId, ownerId, ask, listedAt: AT },
});

export const instanceCreated = (
  instanceId: number,
  machineId: number,
  numGpus: number,
  templateId: number | null = null,
): SpecEvent<InstanceCreated> => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated',
  data: { instanceId, machineId, numGpus, renter: 2, templateId, createdAt: AT } as InstanceCreated['data'],
});
