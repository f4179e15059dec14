import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { benchmarksProjection } from './projection';

const AT = '2026-11-25T12:00:00.000Z';
const measured = (machineId: number, type: string, value: number) => ({
  streamId: `benchmark-${machineId}`,
  type: 'MachineBenchmarked',
  data: {
    machineId,
    gpuName: 'RTX 4090',
    numGpus: 2,
    dphBase: machineId === 7 ? 0.5 : null,
    type,
    value,
    at: AT,
  },
});

describe('benchmarks projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, benchmarksProjection);
  afterAll(() => spec.close());

  it('keeps one row per record, with the machine, the value and when it was measured', () =>
    spec
      .given([measured(7, 'disk_write', 812.5), measured(8, 'disk_write', 90)])
      .when(measured(7, 'cpu_sha256', 530))
      .then(
        `SELECT machine_id, type, value, dph_base, last_update FROM instance_lifecycle.benchmarks ORDER BY machine_id, type`,
        [
          {
            machine_id: 7,
            type: 'cpu_sha256',
            value: 530,
            dph_base: 0.5,
            last_update: Date.parse(AT) / 1000,
          },
          {
            machine_id: 7,
            type: 'disk_write',
            value: 812.5,
            dph_base: 0.5,
            last_update: Date.parse(AT) / 1000,
          },
          {
            machine_id: 8,
            type: 'disk_write',
            value: 90,
            dph_base: null,
            last_update: Date.parse(AT) / 1000,
          },
        ],
      ));
});
