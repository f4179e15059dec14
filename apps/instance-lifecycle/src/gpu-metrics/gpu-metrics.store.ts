import { Inject, Injectable } from '@nestjs/common';
import type { AgentGpuSample } from '@rigmarket/contracts';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { SCHEMA } from '../schema';

/** How GPU samples are kept (docs/instances.md, "GPU metrics"). */
export interface GpuMetricsOptions {
  /** Fine aggregates: one row per GPU and bucket of this many seconds (default 60)... */
  fineBucketSeconds: number;
  /** ...kept this long (default 24 h). */
  fineRetentionSeconds: number;
  /** Coarse aggregates (default one per hour)... */
  coarseBucketSeconds: number;
  /** ...kept this long (default 30 days). */
  coarseRetentionSeconds: number;
  /** A GPU's latest sample counts as current this long (default 5 min). */
  currentMaxAgeSeconds: number;
  /** Samples of one machine closer together than this are dropped (default 1 s). */
  minSampleIntervalMs: number;
}

export const DEFAULT_GPU_METRICS: GpuMetricsOptions = {
  fineBucketSeconds: 60,
  fineRetentionSeconds: 24 * 3600,
  coarseBucketSeconds: 3600,
  coarseRetentionSeconds: 30 * 24 * 3600,
  currentMaxAgeSeconds: 300,
  minSampleIntervalMs: 1_000,
};

export const GPU_METRICS_OPTIONS = Symbol('GPU_METRICS_OPTIONS');

const PRUNE_EVERY_MS = 60_000;

/** GPUs of the machine held by its running instances (which indices is not known: counts only). */
async function rentedGpus(sql: Sql, machineId: number): Promise<number> {
  const rows = await sql.query<{ n: number | string | null }>(
    `SELECT COALESCE(SUM(num_gpus), 0) AS n FROM ${SCHEMA}.instances
      WHERE machine_id = $1 AND NOT destroyed AND intended_status = 'running'`,
    [machineId],
  );
  return Number(rows[0]?.n ?? 0);
}

const part = (value: number | null) => [value ?? 0, value === null ? 0 : 1] as const;

/**
 * Where the host agents' GPU samples go (the agent channel's `gpu_metrics`): the latest sample per GPU, and
 * each sample folded into the GPU's minute and hour aggregates (sums and counts, so means stay exact).
 * Bounded: one sample per machine per second at most, 16 GPUs per sample, and rows past retention deleted.
 */
@Injectable()
export class GpuMetricsStore {
  private readonly lastSample = new Map<number, number>();
  private lastPrune = 0;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(GPU_METRICS_OPTIONS) readonly options: GpuMetricsOptions,
  ) {}

  async record(machineId: number, gpus: readonly AgentGpuSample[], nowMs = Date.now()): Promise<boolean> {
    const last = this.lastSample.get(machineId);
    if (gpus.length === 0 || (last !== undefined && nowMs - last < this.options.minSampleIntervalMs))
      return false;
    this.lastSample.set(machineId, nowMs);
    const db = this.runtime.db;
    const rented = await rentedGpus(db, machineId);
    const now = nowMs / 1000;
    const ordered = [...gpus].sort((a, b) => a.index - b.index);
    for (const [position, gpu] of ordered.entries()) {
      await db.execute(
        `INSERT INTO ${SCHEMA}.gpu_samples_current
           (machine_id, gpu_index, gpu_name, sampled_at, utilization, memory_used, memory_total, temperature, power)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (machine_id, gpu_index) DO UPDATE SET gpu_name = EXCLUDED.gpu_name,
           sampled_at = EXCLUDED.sampled_at, utilization = EXCLUDED.utilization,
           memory_used = EXCLUDED.memory_used, memory_total = EXCLUDED.memory_total,
           temperature = EXCLUDED.temperature, power = EXCLUDED.power`,
        [
          machineId,
          gpu.index,
          gpu.name,
          now,
          gpu.utilization,
          gpu.memoryUsedMb,
          gpu.memoryTotalMb,
          gpu.temperatureC,
          gpu.powerW,
        ],
      );
      for (const seconds of new Set([this.options.fineBucketSeconds, this.options.coarseBucketSeconds])) {
        await db.execute(
          `INSERT INTO ${SCHEMA}.gpu_sample_buckets AS b
             (machine_id, gpu_index, bucket_seconds, bucket_start, gpu_name, samples, rented_samples,
              utilization_sum, utilization_n, memory_used_sum, memory_used_n, memory_total,
              temperature_sum, temperature_n, temperature_max, power_sum, power_n)
           VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
           ON CONFLICT (machine_id, gpu_index, bucket_seconds, bucket_start) DO UPDATE SET
             gpu_name = EXCLUDED.gpu_name, samples = b.samples + 1,
             rented_samples = b.rented_samples + EXCLUDED.rented_samples,
             utilization_sum = b.utilization_sum + EXCLUDED.utilization_sum,
             utilization_n = b.utilization_n + EXCLUDED.utilization_n,
             memory_used_sum = b.memory_used_sum + EXCLUDED.memory_used_sum,
             memory_used_n = b.memory_used_n + EXCLUDED.memory_used_n,
             memory_total = COALESCE(EXCLUDED.memory_total, b.memory_total),
             temperature_sum = b.temperature_sum + EXCLUDED.temperature_sum,
             temperature_n = b.temperature_n + EXCLUDED.temperature_n,
             temperature_max = GREATEST(b.temperature_max, EXCLUDED.temperature_max),
             power_sum = b.power_sum + EXCLUDED.power_sum,
             power_n = b.power_n + EXCLUDED.power_n`,
          [
            machineId,
            gpu.index,
            seconds,
            Math.floor(now / seconds) * seconds,
            gpu.name,
            position < rented ? 1 : 0,
            ...part(gpu.utilization),
            ...part(gpu.memoryUsedMb),
            gpu.memoryTotalMb,
            ...part(gpu.temperatureC),
            gpu.temperatureC,
            ...part(gpu.powerW),
          ],
        );
      }
    }
    if (nowMs - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = nowMs;
      await this.prune(now);
    }
    return true;
  }

  /** Deletes aggregates past their retention and latest samples older than the coarse retention. */
  async prune(now = Date.now() / 1000): Promise<void> {
    const o = this.options;
    const db = this.runtime.db;
    for (const [seconds, retention] of [
      [o.fineBucketSeconds, o.fineRetentionSeconds],
      [o.coarseBucketSeconds, o.coarseRetentionSeconds],
    ] as const)
      await db.execute(
        `DELETE FROM ${SCHEMA}.gpu_sample_buckets WHERE bucket_seconds = $1 AND bucket_start < $2`,
        [seconds, Math.floor(now - retention)],
      );
    await db.execute(`DELETE FROM ${SCHEMA}.gpu_samples_current WHERE sampled_at < $1`, [
      now - o.coarseRetentionSeconds,
    ]);
  }
}
