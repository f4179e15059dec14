import { defineProjection } from '@rigmarket/event-sourcing';
import type { BenchmarkEvent } from '../../benchmarks/benchmark.decider';
import { SCHEMA } from '../../schema';

/** Every machine's benchmark records; a record's id is its event's position, the same after a rebuild. */
export const benchmarksProjection = defineProjection<BenchmarkEvent>({
  name: 'benchmarks',
  version: 1,
  sources: [{ context: 'instance', streamType: 'benchmark' }],
  tables: [`${SCHEMA}.benchmarks`],
  eventTypes: ['MachineBenchmarked'],
  async apply(sql, event) {
    const d = event.data;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.benchmarks (id, machine_id, gpu_name, num_gpus, type, value, dph_base, last_update)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [
        event.globalPosition,
        d.machineId,
        d.gpuName,
        d.numGpus,
        d.type,
        d.value,
        d.dphBase,
        Date.parse(d.at) / 1000,
      ],
    );
  },
});
