import type { Migration } from '@rigmarket/event-sourcing';

/**
 * The host agents' GPU samples (docs/instances.md, "GPU metrics"): the latest sample of each GPU, and
 * per-minute and per-hour aggregates of a bounded past. Telemetry, not read models: no event records a
 * sample, nothing rebuilds these tables, and their rows expire.
 */
export const gpuMetrics: Migration = {
  id: '0018-gpu-metrics',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.gpu_samples_current (
        machine_id INTEGER NOT NULL,
        gpu_index INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        sampled_at DOUBLE PRECISION NOT NULL,
        utilization DOUBLE PRECISION,
        memory_used DOUBLE PRECISION,
        memory_total DOUBLE PRECISION,
        temperature DOUBLE PRECISION,
        power DOUBLE PRECISION,
        PRIMARY KEY (machine_id, gpu_index)
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.gpu_sample_buckets (
        machine_id INTEGER NOT NULL,
        gpu_index INTEGER NOT NULL,
        bucket_seconds INTEGER NOT NULL,
        bucket_start BIGINT NOT NULL,
        gpu_name TEXT NOT NULL,
        samples INTEGER NOT NULL,
        rented_samples INTEGER NOT NULL,
        utilization_sum DOUBLE PRECISION NOT NULL,
        utilization_n INTEGER NOT NULL,
        memory_used_sum DOUBLE PRECISION NOT NULL,
        memory_used_n INTEGER NOT NULL,
        memory_total DOUBLE PRECISION,
        temperature_sum DOUBLE PRECISION NOT NULL,
        temperature_n INTEGER NOT NULL,
        temperature_max DOUBLE PRECISION,
        power_sum DOUBLE PRECISION NOT NULL,
        power_n INTEGER NOT NULL,
        PRIMARY KEY (machine_id, gpu_index, bucket_seconds, bucket_start)
      )`);
    await sql.execute(
      `CREATE INDEX gpu_sample_buckets_by_time ON ${s}.gpu_sample_buckets (bucket_seconds, bucket_start)`,
    );
  },
};
