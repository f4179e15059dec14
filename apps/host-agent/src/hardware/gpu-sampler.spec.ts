import { parseNvidiaSmiSamples } from './gpu-sampler';

/** `nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw --format=csv,noheader,nounits` */
const TWO_GPUS = `0, NVIDIA GeForce RTX 4090, 87, 20112, 24564, 71, 402.17
1, NVIDIA GeForce RTX 4090, 0, 1, 24564, 34, [N/A]
`;

describe('nvidia-smi samples', () => {
  it('reads utilisation, memory, temperature and power per GPU, in marketplace names', () => {
    expect(parseNvidiaSmiSamples(TWO_GPUS)).toEqual([
      {
        index: 0,
        name: 'RTX 4090',
        utilization: 87,
        memoryUsedMb: 20112,
        memoryTotalMb: 24564,
        temperatureC: 71,
        powerW: 402.17,
      },
      {
        index: 1,
        name: 'RTX 4090',
        utilization: 0,
        memoryUsedMb: 1,
        memoryTotalMb: 24564,
        temperatureC: 34,
        powerW: null,
      },
    ]);
  });

  it('skips lines that are not GPUs and keeps at most 16 GPUs', () => {
    const many = Array.from({ length: 20 }, (_, i) => `${i}, NVIDIA H100 80GB HBM3, 5, 10, 81559, 40, 70.5`);
    const parsed = parseNvidiaSmiSamples(
      ['No devices were found', '', 'x, y', '[Not Supported], A, 1, 2, 3, 4, 5', ...many].join('\n'),
    );
    expect(parsed).toHaveLength(16);
    expect(parsed[0]).toMatchObject({ index: 0, name: 'H100 80GB HBM3', powerW: 70.5 });
  });
});
