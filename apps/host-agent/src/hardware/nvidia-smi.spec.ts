import {
  gpuInventory,
  marketplaceGpuName,
  parseCudaVersion,
  parseNvidiaSmiGpus,
  parseSimulatedGpus,
} from './nvidia-smi';

/** `nvidia-smi --query-gpu=index,name,memory.total,driver_version,pcie.link.gen.max,compute_cap --format=csv,noheader,nounits` on a 4x4090 host. */
const FOUR_4090 = `0, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9
1, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9
2, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9
3, NVIDIA GeForce RTX 4090, 24564, 550.54.15, 4, 8.9
`;

const BANNER = `Mon Nov 23 02:14:41 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+`;

describe('nvidia-smi parsing', () => {
  it('reads one GPU per line, in marketplace names, RAM in MB and compute capability as 890', () => {
    const gpus = parseNvidiaSmiGpus(FOUR_4090);
    expect(gpus).toHaveLength(4);
    expect(gpus[3]).toEqual({
      index: 3,
      name: 'RTX 4090',
      memoryMb: 24564,
      driverVersion: '550.54.15',
      pcieGen: 4,
      computeCap: 890,
    });
  });

  it('turns the lines and the banner into the machine inventory with Docker device ids', () => {
    expect(gpuInventory(parseNvidiaSmiGpus(FOUR_4090), parseCudaVersion(BANNER))).toEqual({
      gpuName: 'RTX 4090',
      numGpus: 4,
      gpuRamMb: 24564,
      driverVersion: '550.54.15',
      cudaMaxGood: 12.4,
      pcieGen: 4,
      computeCap: 890,
      deviceIds: ['0', '1', '2', '3'],
    });
  });

  it('offers the most common model of a mixed host, and accepts [N/A] fields of older drivers', () => {
    const mixed = `0, NVIDIA A100-SXM4-80GB, 81920, 535.129.03, [N/A], [N/A]\r\n1, NVIDIA A100-SXM4-80GB, 81920, 535.129.03, 4, 8.0\r\n2, Tesla T4, 15360, 535.129.03, 3, 7.5\r\n`;
    const inventory = gpuInventory(parseNvidiaSmiGpus(mixed), null);
    expect(inventory).toMatchObject({
      gpuName: 'A100 SXM4 80GB',
      numGpus: 2,
      gpuRamMb: 81920,
      cudaMaxGood: 0,
      pcieGen: null,
      computeCap: 0,
      deviceIds: ['0', '1'],
    });
  });

  it('has no inventory without GPUs and refuses a line it does not understand', () => {
    expect(gpuInventory(parseNvidiaSmiGpus(''), 12.4)).toBeNull();
    expect(() => parseNvidiaSmiGpus('No devices were found')).toThrow(/unexpected nvidia-smi line/);
  });

  it('names models as the marketplace does', () => {
    expect(marketplaceGpuName('NVIDIA H100 80GB HBM3')).toBe('H100 80GB HBM3');
    expect(marketplaceGpuName('Quadro RTX 6000')).toBe('RTX 6000');
  });
});

describe('--simulate-gpus', () => {
  it('takes N, an optional name with _ for spaces and an optional RAM', () => {
    expect(parseSimulatedGpus('2')).toMatchObject({
      numGpus: 2,
      gpuName: 'RTX 4090',
      gpuRamMb: 24564,
      deviceIds: [],
    });
    expect(parseSimulatedGpus('8:H100_80GB_HBM3:81559')).toMatchObject({
      numGpus: 8,
      gpuName: 'H100 80GB HBM3',
      gpuRamMb: 81559,
    });
  });

  it('refuses a count below one', () => {
    expect(() => parseSimulatedGpus('0:RTX_4090')).toThrow(/N >= 1/);
  });
});
