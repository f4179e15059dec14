/**
 * What the agent asks nvidia-smi, and the pure parsing of its answer (unit-tested with real-looking
 * output in nvidia-smi.spec.ts).
 */
export const NVIDIA_SMI_QUERY = [
  '--query-gpu=index,name,memory.total,driver_version,pcie.link.gen.max,compute_cap',
  '--format=csv,noheader,nounits',
];

export interface DetectedGpu {
  index: number;
  /** As the marketplace names models: "RTX 4090", "A100 SXM4 80GB", "H100 80GB HBM3". */
  name: string;
  memoryMb: number;
  driverVersion: string;
  pcieGen: number | null;
  /** 8.9 -> 890, as the marketplace stores it. */
  computeCap: number | null;
}

export interface GpuInventory {
  gpuName: string;
  numGpus: number;
  gpuRamMb: number;
  driverVersion: string;
  cudaMaxGood: number;
  pcieGen: number | null;
  computeCap: number;
  /** Device indices Docker can request (DeviceIDs); empty for simulated GPUs. */
  deviceIds: string[];
}

/** "NVIDIA GeForce RTX 4090" -> "RTX 4090"; "NVIDIA A100-SXM4-80GB" -> "A100 SXM4 80GB". */
export function marketplaceGpuName(raw: string): string {
  return raw
    .replace(/^NVIDIA\s+/i, '')
    .replace(/^(GeForce|Quadro|Tesla)\s+/i, '')
    .replace(/-/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const numberOrNull = (text: string | undefined): number | null => {
  if (text === undefined) return null;
  const value = Number(text.trim());
  return text.trim() === '' || !Number.isFinite(value) ? null : value;
};

/** One line per GPU: `index, name, memory.total [MiB], driver_version, pcie.link.gen.max, compute_cap`. */
export function parseNvidiaSmiGpus(csv: string): DetectedGpu[] {
  return csv
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => {
      const [index, name, memory, driver, pcie, cap] = line.split(',').map((field) => field.trim());
      const memoryMb = numberOrNull(memory);
      if (index === undefined || !name || memoryMb === null || !driver)
        throw new Error(`unexpected nvidia-smi line: ${line}`);
      const computeCap = numberOrNull(cap);
      return {
        index: Number(index),
        name: marketplaceGpuName(name),
        memoryMb,
        driverVersion: driver,
        pcieGen: numberOrNull(pcie),
        computeCap: computeCap === null ? null : Math.round(computeCap * 100),
      };
    });
}

/** "CUDA Version: 12.4" in nvidia-smi's banner; null when absent. */
export function parseCudaVersion(banner: string): number | null {
  const match = /CUDA Version:\s*([\d.]+)/.exec(banner);
  return match?.[1] ? Number(match[1]) : null;
}

/** The machine offers its most common model (a host with mixed GPUs lists that model's GPUs only). */
export function gpuInventory(gpus: DetectedGpu[], cudaVersion: number | null): GpuInventory | null {
  const first = gpus[0];
  if (!first) return null;
  const counts = new Map<string, number>();
  for (const gpu of gpus) counts.set(gpu.name, (counts.get(gpu.name) ?? 0) + 1);
  const name = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? first.name;
  const same = gpus.filter((gpu) => gpu.name === name);
  return {
    gpuName: name,
    numGpus: same.length,
    gpuRamMb: Math.min(...same.map((gpu) => gpu.memoryMb)),
    driverVersion: first.driverVersion,
    cudaMaxGood: cudaVersion ?? 0,
    pcieGen: same[0]?.pcieGen ?? null,
    computeCap: same[0]?.computeCap ?? 0,
    deviceIds: same.map((gpu) => String(gpu.index)),
  };
}

/** `--simulate-gpus N[:NAME[:RAM_MB]]`, NAME with `_` for spaces: "4:RTX_4090:24564". */
export function parseSimulatedGpus(option: string): GpuInventory {
  const [count, name, ram] = option.split(':');
  const numGpus = Number(count);
  if (!Number.isInteger(numGpus) || numGpus < 1)
    throw new Error(`--simulate-gpus wants N[:NAME[:RAM_MB]] with N >= 1, got "${option}"`);
  const gpuRamMb = ram === undefined ? 24_564 : Number(ram);
  if (!Number.isFinite(gpuRamMb) || gpuRamMb <= 0)
    throw new Error(`--simulate-gpus: RAM_MB must be a positive number, got "${ram}"`);
  return {
    gpuName: (name ?? 'RTX 4090').replace(/_/g, ' ').trim() || 'RTX 4090',
    numGpus,
    gpuRamMb,
    driverVersion: 'simulated',
    cudaMaxGood: 12.4,
    pcieGen: 4,
    computeCap: 890,
    deviceIds: [],
  };
}
