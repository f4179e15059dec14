import { deciderSpec } from '@rigmarket/testing';
import { type BenchmarkCommand, type MachineBenchmarked, benchmarkDecider } from './benchmark.decider';

const AT = '2026-11-25T12:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
const record = (at: string, results: BenchmarkCommand['results']): BenchmarkCommand => ({
  type: 'RecordBenchmarks',
  machineId: 7,
  gpuName: 'RTX 4090',
  numGpus: 2,
  dphBase: 0.5,
  results,
  at,
});
const recorded = (type: string, value: number, at = AT): MachineBenchmarked => ({
  type: 'MachineBenchmarked',
  data: { machineId: 7, gpuName: 'RTX 4090', numGpus: 2, dphBase: 0.5, type, value, at },
});

const spec = deciderSpec(benchmarkDecider);

describe('benchmark decider', () => {
  it('records each measured type once, with the machine as it is', () =>
    spec
      .given([])
      .when(
        record(AT, [
          { type: 'disk_write', value: 812.5 },
          { type: 'cpu_sha256', value: 530 },
          { type: 'disk_write', value: 1 },
        ]),
      )
      .then([recorded('disk_write', 812.5), recorded('cpu_sha256', 530)]));

  it('does not record a type again within 10 minutes, and does after', () => {
    spec
      .given([recorded('disk_write', 812.5)])
      .when(
        record(later(5), [
          { type: 'disk_write', value: 700 },
          { type: 'cpu_sha256', value: 530 },
        ]),
      )
      .then([recorded('cpu_sha256', 530, later(5))]);
    spec
      .given([recorded('disk_write', 812.5)])
      .when(record(later(10), [{ type: 'disk_write', value: 700 }]))
      .then([recorded('disk_write', 700, later(10))]);
  });
});
