import type { MachineAsk, MachineHardware, MachineVerification } from '@rigmarket/contracts';

/** A machine as the machines read model holds it: what the offers are derived from. */
export interface MachineForOffers {
  machineId: number;
  ownerId: number;
  hardware: MachineHardware;
  ask: MachineAsk | null;
  listed: boolean;
  listedAt: number | null;
  verification: MachineVerification;
  reliability: number;
  dlperf: number;
  tflops: number;
  gpusAllocated: number;
}

/** One row of marketplace.offers: one chunk of one listed machine's free GPUs. */
export interface OfferRow {
  id: number;
  machine_id: number;
  host_id: number;
  num_gpus: number;
  gpu_name: string;
  gpu_ram: number;
  gpu_total_ram: number;
  cpu_name: string | null;
  cpu_cores: number;
  cpu_cores_effective: number;
  cpu_ram: number;
  cpu_ghz: number | null;
  disk_space: number;
  disk_bw: number | null;
  disk_name: string | null;
  dph_base: number;
  min_bid: number;
  credit_discount_max: number;
  storage_cost: number;
  inet_up: number;
  inet_down: number;
  inet_up_cost: number;
  inet_down_cost: number;
  reliability: number;
  dlperf: number;
  total_flops: number;
  score: number;
  cuda_max_good: number;
  driver_version: string;
  driver_vers: number;
  compute_cap: number;
  pcie_bw: number | null;
  pci_gen: number | null;
  direct_port_count: number;
  geolocation: string | null;
  public_ipaddr: string | null;
  hostname: string | null;
  verified: boolean;
  verification: string;
  rentable: boolean;
  rented: boolean;
  external: boolean;
  start_date: number | null;
  end_date: number | null;
  hosting_type: number;
}

export const OFFER_COLUMNS: ReadonlyArray<keyof OfferRow> = [
  'id',
  'machine_id',
  'host_id',
  'num_gpus',
  'gpu_name',
  'gpu_ram',
  'gpu_total_ram',
  'cpu_name',
  'cpu_cores',
  'cpu_cores_effective',
  'cpu_ram',
  'cpu_ghz',
  'disk_space',
  'disk_bw',
  'disk_name',
  'dph_base',
  'min_bid',
  'credit_discount_max',
  'storage_cost',
  'inet_up',
  'inet_down',
  'inet_up_cost',
  'inet_down_cost',
  'reliability',
  'dlperf',
  'total_flops',
  'score',
  'cuda_max_good',
  'driver_version',
  'driver_vers',
  'compute_cap',
  'pcie_bw',
  'pci_gen',
  'direct_port_count',
  'geolocation',
  'public_ipaddr',
  'hostname',
  'verified',
  'verification',
  'rentable',
  'rented',
  'external',
  'start_date',
  'end_date',
  'hosting_type',
];

/** "535.86.05" -> 535086005, the integer form the CLI sends in driver_version filters. */
export function driverVersionNumber(version: string): number {
  const parts = version.split('.').map((p) => Number.parseInt(p, 10) || 0);
  return (parts[0] ?? 0) * 1_000_000 + (parts[1] ?? 0) * 1_000 + (parts[2] ?? 0);
}

/** The GPU counts offered: min_chunk, 2x, 4x... up to the free count, and the whole free count. */
export function chunkSizes(minChunk: number, free: number): number[] {
  const sizes: number[] = [];
  for (let size = Math.max(1, minChunk); size <= free; size *= 2) sizes.push(size);
  if (free >= minChunk && free > 0 && !sizes.includes(free)) sizes.push(free);
  return sizes;
}

/** Offer ids encode machine and size, so they are stable while the listing stands: 42002 = machine 42, 2 GPUs. */
export const offerId = (machineId: number, numGpus: number): number => machineId * 1000 + numGpus;

export function offerRowsFor(machine: MachineForOffers): OfferRow[] {
  const { hardware: hw, ask } = machine;
  if (!machine.listed || !ask || machine.verification === 'deverified') return [];
  const free = hw.numGpus - machine.gpusAllocated;
  const share = (n: number) => n / Math.max(1, hw.numGpus);
  return chunkSizes(ask.minChunk, free).map((n) => {
    const dphBase = ask.priceGpu * n;
    const dlperf = machine.dlperf * share(n);
    return {
      id: offerId(machine.machineId, n),
      machine_id: machine.machineId,
      host_id: machine.ownerId,
      num_gpus: n,
      gpu_name: hw.gpuName,
      gpu_ram: hw.gpuRamMb,
      gpu_total_ram: hw.gpuRamMb * n,
      cpu_name: hw.cpuName,
      cpu_cores: hw.cpuCores,
      cpu_cores_effective: hw.cpuCores * share(n),
      cpu_ram: Math.floor(hw.cpuRamMb * share(n)),
      cpu_ghz: hw.cpuGhz,
      disk_space: hw.diskSpaceGb * share(n),
      disk_bw: hw.diskBwMbps,
      disk_name: hw.diskName,
      dph_base: dphBase,
      min_bid: ask.minBid * n,
      credit_discount_max: ask.creditDiscountMax,
      storage_cost: ask.priceDisk,
      inet_up: hw.inetUpMbps,
      inet_down: hw.inetDownMbps,
      inet_up_cost: ask.priceInetUp,
      inet_down_cost: ask.priceInetDown,
      reliability: machine.reliability,
      dlperf,
      total_flops: machine.tflops * share(n),
      score: dphBase > 0 ? (dlperf / dphBase) * machine.reliability : 0,
      cuda_max_good: hw.cudaMaxGood,
      driver_version: hw.driverVersion,
      driver_vers: driverVersionNumber(hw.driverVersion),
      compute_cap: hw.computeCap,
      pcie_bw: hw.pcieBwGbps,
      pci_gen: hw.pcieGen,
      direct_port_count: hw.directPortCount,
      geolocation: hw.geolocation,
      public_ipaddr: hw.publicIpaddr,
      hostname: hw.hostname,
      verified: machine.verification === 'verified',
      verification: machine.verification,
      rentable: true,
      rented: false,
      external: false,
      start_date: machine.listedAt,
      end_date: ask.endDate,
      hosting_type: hw.hostingType,
    };
  });
}
