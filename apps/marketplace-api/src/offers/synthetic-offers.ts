import { knownGpuModels } from '../machines/gpu-models';
import { driverVersionNumber, type OfferRow } from './offer-rows';

/**
 * Deterministic synthetic offer rows at marketplace scale, for the differential test and
 * bench/offer-search.js (rows are inserted in bulk, not through the machine stream).
 */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GEOS = ['US', 'CA', 'SE', 'TW', 'DE', 'FR', 'JP', 'BR', null];
const DRIVERS = ['535.86.05', '545.23.08', '550.54.15', '560.35.03', '570.86.10'];
const GPU_RAM = [8192, 12288, 16384, 24564, 49140, 81920];
const VERIFICATIONS = ['verified', 'verified', 'verified', 'unverified'];

export function syntheticOfferRows(count: number, seed = 42, nowEpochSeconds = 1_780_000_000): OfferRow[] {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const models = knownGpuModels();
  const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
  const rows: OfferRow[] = [];
  for (let i = 0; i < count; i += 1) {
    const numGpus = pick([1, 1, 2, 2, 4, 8]);
    const gpuRam = pick(GPU_RAM);
    const priceGpu = round(0.05 + rand() * 3, 3);
    const reliability = round(0.8 + rand() * 0.2, 4);
    const dlperf = round(numGpus * (5 + rand() * 100), 3);
    const dphBase = round(priceGpu * numGpus, 6);
    const verification = pick(VERIFICATIONS);
    const driver = pick(DRIVERS);
    const machineId = 1 + Math.floor(i / 4);
    rows.push({
      id: i + 1,
      machine_id: machineId,
      host_id: 1 + Math.floor(rand() * 2000),
      num_gpus: numGpus,
      gpu_name: pick(models),
      gpu_ram: gpuRam,
      gpu_total_ram: gpuRam * numGpus,
      cpu_name: rand() < 0.1 ? null : pick(['AMD EPYC 7543', 'Intel Xeon Gold 6338', 'AMD Ryzen 9 7950X']),
      cpu_cores: pick([8, 16, 32, 64]),
      cpu_cores_effective: round(rand() * 64, 2),
      cpu_ram: pick([32000, 64000, 128000, 256000]),
      cpu_ghz: rand() < 0.05 ? null : round(2 + rand() * 3, 1),
      disk_space: round(rand() * 4000, 1),
      disk_bw: rand() < 0.05 ? null : round(rand() * 5000, 0),
      disk_name: null,
      dph_base: dphBase,
      min_bid: round(dphBase * (0.3 + rand() * 0.5), 6),
      credit_discount_max: round(rand() * 0.5, 2),
      storage_cost: round(rand() * 0.3, 3),
      inet_up: round(rand() * 2000, 0),
      inet_down: round(rand() * 2000, 0),
      inet_up_cost: round(rand() * 0.02, 4),
      inet_down_cost: round(rand() * 0.02, 4),
      reliability,
      dlperf,
      total_flops: round(numGpus * rand() * 90, 3),
      score: dphBase > 0 ? (dlperf / dphBase) * reliability : 0,
      cuda_max_good: pick([11.8, 12.0, 12.2, 12.4, 12.6]),
      driver_version: driver,
      driver_vers: driverVersionNumber(driver),
      compute_cap: pick([750, 800, 860, 890, 900]),
      pcie_bw: rand() < 0.1 ? null : round(rand() * 50, 1),
      pci_gen: pick([3, 4, 5]),
      direct_port_count: Math.floor(rand() * 200),
      geolocation: pick(GEOS),
      public_ipaddr: null,
      hostname: null,
      verified: verification === 'verified',
      verification,
      rentable: rand() < 0.9,
      rented: rand() < 0.2,
      external: rand() < 0.1,
      start_date: nowEpochSeconds - Math.floor(rand() * 1e7),
      end_date: rand() < 0.3 ? null : nowEpochSeconds + Math.floor((rand() - 0.1) * 1e7),
      hosting_type: rand() < 0.3 ? 1 : 0,
    });
  }
  return rows;
}
