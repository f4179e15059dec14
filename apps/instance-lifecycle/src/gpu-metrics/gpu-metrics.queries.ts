import { ApiError, type MachineAsk } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import type { GpuMetricsOptions } from './gpu-metrics.store';

/** The filters `vastai show gpu-metrics|gpu-trends` send (`verified`, `hosting_type`, `num_gpus`). */
export interface MachineFilter {
  verified: 'yes' | 'no' | 'all';
  hostingType: 'secure_cloud' | 'community' | 'all';
  numGpus: 'all' | '1' | '2' | '4' | '8' | 'other';
}

const oneOf = <T extends string>(value: unknown, name: string, allowed: readonly T[]): T => {
  if (value === undefined || value === '') return allowed[allowed.length - 1] as T;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw ApiError.badRequest(`${name} must be one of ${allowed.join(', ')}`);
};

export function machineFilter(query: Record<string, unknown>): MachineFilter {
  return {
    verified: oneOf(query.verified, 'verified', ['yes', 'no', 'all']),
    hostingType: oneOf(query.hosting_type, 'hosting_type', ['secure_cloud', 'community', 'all']),
    numGpus: oneOf(query.num_gpus, 'num_gpus', ['1', '2', '4', '8', 'other', 'all']),
  };
}

interface Machine {
  machineId: number;
  gpuName: string;
  numGpus: number;
  listed: boolean;
  verified: boolean;
  geolocation: string | null;
  priceGpu: number | null;
  /** GPUs held by running instances. */
  rented: number;
}

const asAsk = (value: unknown): MachineAsk | null =>
  value === null || value === undefined
    ? null
    : typeof value === 'string'
      ? (JSON.parse(value) as MachineAsk)
      : (value as MachineAsk);

/** Machines (all, or one owner's) with the GPUs their running instances hold. */
async function machines(sql: Sql, ownerId: number | null): Promise<Machine[]> {
  const rows = await sql.query<{
    machine_id: number;
    gpu_name: string;
    num_gpus: number;
    listed: boolean;
    verification: string;
    geolocation: string | null;
    ask: unknown;
    rented: number | string | null;
  }>(
    `SELECT m.machine_id, m.gpu_name, m.num_gpus, m.listed, m.verification, m.geolocation, m.ask,
            (SELECT COALESCE(SUM(i.num_gpus), 0) FROM ${SCHEMA}.instances i
              WHERE i.machine_id = m.machine_id AND NOT i.destroyed AND i.intended_status = 'running') AS rented
       FROM ${SCHEMA}.market_machines m
      ${ownerId === null ? '' : 'WHERE m.owner_id = $1'}
      ORDER BY m.machine_id`,
    ownerId === null ? [] : [ownerId],
  );
  return rows.map((row) => ({
    machineId: Number(row.machine_id),
    gpuName: row.gpu_name,
    numGpus: Number(row.num_gpus),
    listed: row.listed,
    verified: row.verification === 'verified',
    geolocation: row.geolocation,
    priceGpu: asAsk(row.ask)?.priceGpu ?? null,
    rented: Math.min(Number(row.rented ?? 0), Number(row.num_gpus)),
  }));
}

/** The caller's machines passing the filter; null when the caller has no machine at all (needs_machine). */
export async function ownMachines(
  sql: Sql,
  ownerId: number,
  filter: MachineFilter,
): Promise<Machine[] | null> {
  const all = await machines(sql, ownerId);
  if (all.length === 0) return null;
  return all.filter(
    (m) =>
      (filter.verified === 'all' || m.verified === (filter.verified === 'yes')) &&
      // Rigmarket has no secure-cloud (datacenter) hosting: every machine is a community one.
      filter.hostingType !== 'secure_cloud' &&
      (filter.numGpus === 'all' ||
        (filter.numGpus === 'other'
          ? ![1, 2, 4, 8].includes(m.numGpus)
          : m.numGpus === Number(filter.numGpus))),
  );
}

const round = (value: number | null, digits = 1): number | null =>
  value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits;
const mean = (values: Array<number | null>): number | null => {
  const present = values.filter((v): v is number => v !== null);
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null;
};
/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: number[], p: number): number | null =>
  sorted.length ? (sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? null) : null;

interface CurrentSample {
  machine_id: number;
  gpu_index: number;
  gpu_name: string;
  sampled_at: number;
  utilization: number | null;
  memory_used: number | null;
  memory_total: number | null;
  temperature: number | null;
  power: number | null;
}

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** `GET /metrics/gpu/current/`: one row per GPU model of the caller's machines, with their latest samples. */
export async function currentGpuMetrics(
  sql: Sql,
  options: GpuMetricsOptions,
  ownerId: number,
  filter: MachineFilter,
) {
  const own = await ownMachines(sql, ownerId, filter);
  if (own === null) return { success: true, gpus: [], needs_machine: true };
  const samples = (
    await sql.query<CurrentSample>(
      `SELECT s.* FROM ${SCHEMA}.gpu_samples_current s
         JOIN ${SCHEMA}.market_machines m ON m.machine_id = s.machine_id
        WHERE m.owner_id = $1 AND s.sampled_at >= $2
        ORDER BY s.machine_id, s.gpu_index`,
      [ownerId, Date.now() / 1000 - options.currentMaxAgeSeconds],
    )
  ).map((row) => ({
    machine_id: Number(row.machine_id),
    gpu_index: Number(row.gpu_index),
    gpu_name: row.gpu_name,
    sampled_at: Number(row.sampled_at),
    utilization: numberOrNull(row.utilization),
    memory_used: numberOrNull(row.memory_used),
    memory_total: numberOrNull(row.memory_total),
    temperature: numberOrNull(row.temperature),
    power: numberOrNull(row.power),
  }));
  const names = [...new Set(own.map((m) => m.gpuName))].sort();
  const gpus = names.map((name) => {
    const group = own.filter((m) => m.gpuName === name);
    const ids = new Set(group.map((m) => m.machineId));
    const devices = samples.filter((s) => ids.has(s.machine_id));
    const sum = (pick: (m: Machine) => number) => group.reduce((total, m) => total + pick(m), 0);
    const free = (m: Machine) => m.numGpus - m.rented;
    const prices = group
      .filter((m) => m.listed && m.priceGpu !== null)
      .map((m) => m.priceGpu as number)
      .sort((a, b) => a - b);
    return {
      gpu_name: name,
      total: sum((m) => m.numGpus),
      available: sum((m) => (m.listed ? free(m) : 0)),
      unavailable: sum((m) => (m.listed ? 0 : free(m))),
      // the mean GPU utilisation (percent) of the latest samples
      usage: round(mean(devices.map((d) => d.utilization))),
      rented_verified: sum((m) => (m.verified ? m.rented : 0)),
      avail_verified: sum((m) => (m.verified && m.listed ? free(m) : 0)),
      rented_unverified: sum((m) => (m.verified ? 0 : m.rented)),
      avail_unverified: sum((m) => (!m.verified && m.listed ? free(m) : 0)),
      dlperf: null,
      tflops: null,
      tflops_per_dollar: null,
      price_p10: percentile(prices, 10),
      price_median: percentile(prices, 50),
      price_p90: percentile(prices, 90),
      sampled_gpus: devices.length,
      memory_used: round(mean(devices.map((d) => d.memory_used))),
      memory_total: round(mean(devices.map((d) => d.memory_total))),
      temperature: round(mean(devices.map((d) => d.temperature))),
      power: round(mean(devices.map((d) => d.power))),
      devices,
    };
  });
  return { success: true, gpus };
}

const MAX_POINTS = 1_000;
const MAX_RANGE_SECONDS = 366 * 24 * 3600;

const unixSeconds = (value: unknown, name: string): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isFinite(n) || n < 0 || n > 1e11)
    throw ApiError.badRequest(`${name} must be a unix timestamp (seconds)`);
  return Math.floor(n);
};

/** The time axis of a history request: [start, end), the step (raised to the resolution and MAX_POINTS). */
export function historyWindow(
  query: Record<string, unknown>,
  options: GpuMetricsOptions,
  now = Date.now() / 1000,
) {
  const end = unixSeconds(query.end, 'end') ?? Math.floor(now);
  const start = unixSeconds(query.start, 'start') ?? end - 24 * 3600;
  if (start >= end || end - start > MAX_RANGE_SECONDS)
    throw ApiError.badRequest('start must be before end, at most a year apart');
  const step = unixSeconds(query.step, 'step');
  // minute aggregates while they are kept, hour aggregates beyond
  const resolution =
    start >= now - options.fineRetentionSeconds ? options.fineBucketSeconds : options.coarseBucketSeconds;
  const wanted = Math.max(step ?? resolution, resolution, Math.ceil((end - start) / MAX_POINTS));
  return { start, end, resolution, step: Math.ceil(wanted / resolution) * resolution };
}

interface Bucket {
  machine_id: number;
  gpu_index: number;
  gpu_name: string;
  bucket_start: number;
  samples: number;
  rented_samples: number;
  utilization_sum: number;
  utilization_n: number;
  memory_used_sum: number;
  memory_used_n: number;
  temperature_sum: number;
  temperature_n: number;
  temperature_max: number | null;
  power_sum: number;
  power_n: number;
}

/** `GET /metrics/gpu/history/`: per GPU model of the caller's machines, one point per step with samples. */
export async function gpuMetricsHistory(
  sql: Sql,
  options: GpuMetricsOptions,
  ownerId: number,
  query: Record<string, unknown>,
) {
  const filter = machineFilter(query);
  const own = await ownMachines(sql, ownerId, filter);
  if (own === null) return { success: true, gpus: {}, needs_machine: true };
  const rawName = typeof query.gpu_name === 'string' ? query.gpu_name.slice(0, 1000) : 'all';
  const wanted =
    rawName.trim().toLowerCase() === 'all' || rawName.trim() === ''
      ? null
      : new Set(rawName.split(',').map((n) => n.trim()));
  const { start, end, resolution, step } = historyWindow(query, options);
  const byMachine = new Map(own.map((m) => [m.machineId, m]));
  const rows = (
    await sql.query<Bucket>(
      `SELECT b.* FROM ${SCHEMA}.gpu_sample_buckets b
         JOIN ${SCHEMA}.market_machines m ON m.machine_id = b.machine_id
        WHERE m.owner_id = $1 AND b.bucket_seconds = $2 AND b.bucket_start >= $3 AND b.bucket_start < $4
        ORDER BY b.bucket_start`,
      [ownerId, resolution, start, end],
    )
  ).filter((b) => byMachine.has(Number(b.machine_id)) && (!wanted || wanted.has(b.gpu_name)));
  const gpus: Record<string, unknown> = {};
  for (const name of [...new Set(rows.map((b) => b.gpu_name))].sort()) {
    const points = new Map<number, Bucket[]>();
    for (const b of rows.filter((r) => r.gpu_name === name)) {
      const at = start + Math.floor((Number(b.bucket_start) - start) / step) * step;
      points.set(at, [...(points.get(at) ?? []), b]);
    }
    const timestamps = [...points.keys()].sort((a, b) => a - b);
    const series = (pick: (buckets: Bucket[]) => number | null) =>
      timestamps.map((t) => pick(points.get(t) ?? []));
    const gpuKey = (b: Bucket) => `${b.machine_id}/${b.gpu_index}`;
    const count = (buckets: Bucket[], keep: (b: Bucket, m: Machine) => boolean) =>
      new Set(buckets.filter((b) => keep(b, byMachine.get(Number(b.machine_id)) as Machine)).map(gpuKey))
        .size;
    const rented = (b: Bucket) => Number(b.rented_samples) > 0;
    const ratio = (sum: keyof Bucket, n: keyof Bucket) => (buckets: Bucket[]) => {
      const total = buckets.reduce((a, b) => a + Number(b[n]), 0);
      return total ? round(buckets.reduce((a, b) => a + Number(b[sum]), 0) / total) : null;
    };
    const all = rows.filter((r) => r.gpu_name === name);
    const utilization = ratio('utilization_sum', 'utilization_n');
    gpus[name] = {
      supply_demand: {
        timestamps,
        rented_verified: series((bs) => count(bs, (b, m) => m.verified && rented(b))),
        avail_verified: series((bs) => count(bs, (b, m) => m.verified && m.listed && !rented(b))),
        rented_unverified: series((bs) => count(bs, (b, m) => !m.verified && rented(b))),
        avail_unverified: series((bs) => count(bs, (b, m) => !m.verified && m.listed && !rented(b))),
        unavail_verified: series((bs) => count(bs, (b, m) => m.verified && !m.listed && !rented(b))),
        unavail_unverified: series((bs) => count(bs, (b, m) => !m.verified && !m.listed && !rented(b))),
        total: series((bs) => count(bs, () => true)),
      },
      // no price history is kept (prices are in the machines' streams; docs/instances.md "GPU metrics")
      pricing: {},
      telemetry: {
        step,
        utilization: series(utilization),
        memory_used: series(ratio('memory_used_sum', 'memory_used_n')),
        temperature: series(ratio('temperature_sum', 'temperature_n')),
        temperature_max: series((bs) =>
          bs.reduce<number | null>(
            (max, b) =>
              b.temperature_max === null ? max : Math.max(max ?? -Infinity, Number(b.temperature_max)),
            null,
          ),
        ),
        power: series(ratio('power_sum', 'power_n')),
      },
      stats: {
        tflops: null,
        dlperf: null,
        tflops_per_dollar: null,
        samples: all.reduce((a, b) => a + Number(b.samples), 0),
        utilization: utilization(all),
        temperature: ratio('temperature_sum', 'temperature_n')(all),
        power: ratio('power_sum', 'power_n')(all),
      },
    };
  }
  return { success: true, gpus };
}

/** "Oregon, US" -> city "Oregon", country "US"; "US" -> country only. */
function place(geolocation: string | null): { city: string | null; country_code: string | null } {
  const parts = (geolocation ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const last = parts[parts.length - 1];
  if (!last) return { city: null, country_code: null };
  const country = /^[A-Za-z]{2}$/.test(last) ? last.toUpperCase() : null;
  const city = (country ? parts.slice(0, -1) : parts).join(', ') || null;
  return { city, country_code: country };
}

/**
 * `GET /metrics/gpu/locations/`: the whole market's GPUs by model, place, verification and state (counts
 * only, no machine ids), for any caller with a machine; the CLI filters the rows itself.
 */
export async function gpuLocations(sql: Sql, ownerId: number) {
  if ((await machines(sql, ownerId)).length === 0)
    return { success: true, locations: [], needs_machine: true };
  const groups = new Map<string, Record<string, unknown> & { num_gpus: number }>();
  for (const m of await machines(sql, null)) {
    const where = place(m.geolocation);
    const parts: Array<['rented' | 'available' | 'unavailable', number]> = [
      ['rented', m.rented],
      [m.listed ? 'available' : 'unavailable', m.numGpus - m.rented],
    ];
    for (const [state, n] of parts) {
      if (n <= 0) continue;
      const key = JSON.stringify([m.gpuName, where.city, where.country_code, m.verified, state]);
      const group = groups.get(key) ?? {
        gpu_name: m.gpuName,
        ...where,
        num_gpus: 0,
        state,
        rented: state === 'rented',
        verified: m.verified,
        datacenter: false,
        latitude: null,
        longitude: null,
      };
      group.num_gpus += n;
      groups.set(key, group);
    }
  }
  return { success: true, locations: [...groups.values()] };
}
