import { execFile } from 'node:child_process';
import { readFile, statfs } from 'node:fs/promises';
import { cpus, hostname, networkInterfaces, totalmem } from 'node:os';
import { promisify } from 'node:util';
import {
  type GpuInventory,
  NVIDIA_SMI_QUERY,
  gpuInventory,
  parseCudaVersion,
  parseNvidiaSmiGpus,
} from './nvidia-smi';

const run = promisify(execFile);

/** The body of POST /api/v0/machines (RAM in MB, disk in GB, bandwidth in Mb/s). */
export interface MachineRegistration {
  gpu_name: string;
  num_gpus: number;
  gpu_ram: number;
  cuda_max_good: number;
  driver_version: string;
  compute_cap: number;
  cpu_name: string;
  cpu_cores: number;
  cpu_ghz: number;
  cpu_ram: number;
  disk_space: number;
  inet_up: number;
  inet_down: number;
  /** Host ports instances may map directly (the Docker driver lets Docker pick free ones). */
  direct_port_count: number;
  public_ipaddr: string;
  hostname: string;
  pci_gen?: number;
}

/** The real GPUs, or null when nvidia-smi is absent or finds none. */
export async function detectNvidiaGpus(): Promise<GpuInventory | null> {
  try {
    // env given explicitly: nvidia-smi is looked up on this process's PATH as it is now
    const { stdout } = await run('nvidia-smi', NVIDIA_SMI_QUERY, { timeout: 15_000, env: process.env });
    const banner = await run('nvidia-smi', [], { timeout: 15_000, env: process.env }).then(
      (r) => r.stdout,
      () => '',
    );
    return gpuInventory(parseNvidiaSmiGpus(stdout), parseCudaVersion(banner));
  } catch {
    return null;
  }
}

/** The first non-internal IPv4 address, else loopback. */
export function defaultPublicAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}

/**
 * The CPU clock in GHz, one decimal: Node's `os.cpus()` speed, else the first `cpu MHz` of /proc/cpuinfo; 0
 * when neither gives one. libuv takes the speed from cpufreq in sysfs, which cloud VMs often lack: on an H100
 * VM Node said 0 while /proc/cpuinfo said 2100 MHz.
 */
export function cpuGhz(nodeSpeedMhz: number, procCpuinfo: string): number {
  const mhz =
    nodeSpeedMhz > 0 ? nodeSpeedMhz : Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(procCpuinfo)?.[1] ?? 0);
  return Number.isFinite(mhz) && mhz > 0 ? Math.round(mhz / 100) / 10 : 0;
}

/**
 * CPU and RAM from node:os (the clock from /proc/cpuinfo where Node has none), free disk of the data
 * directory from statfs, GPUs as given.
 */
export async function detectMachine(
  gpus: GpuInventory,
  options: {
    dataDir: string;
    publicAddress: string;
    inetUpMbps: number;
    inetDownMbps: number;
    directPortCount: number;
  },
): Promise<MachineRegistration> {
  const cpuList = cpus();
  const nodeSpeed = cpuList[0]?.speed ?? 0;
  const cpuinfo = nodeSpeed > 0 ? '' : await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const disk = await statfs(options.dataDir);
  return {
    gpu_name: gpus.gpuName,
    num_gpus: gpus.numGpus,
    gpu_ram: gpus.gpuRamMb,
    cuda_max_good: gpus.cudaMaxGood,
    driver_version: gpus.driverVersion,
    compute_cap: gpus.computeCap,
    cpu_name: cpuList[0]?.model.trim() || 'unknown CPU',
    cpu_cores: Math.max(1, cpuList.length),
    cpu_ghz: cpuGhz(nodeSpeed, cpuinfo),
    cpu_ram: Math.floor(totalmem() / (1024 * 1024)),
    disk_space: Math.floor((disk.bavail * disk.bsize) / 1e9),
    inet_up: options.inetUpMbps,
    inet_down: options.inetDownMbps,
    direct_port_count: options.directPortCount,
    public_ipaddr: options.publicAddress,
    hostname: hostname(),
    ...(gpus.pcieGen !== null ? { pci_gen: gpus.pcieGen } : {}),
  };
}
