import { createHash, randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentBenchmarkResult } from '@rigmarket/contracts';

const MIB = 1024 * 1024;

/** MB/s (10^6 bytes) of `bytes` in `ms`, two decimals. */
const rate = (bytes: number, ms: number) =>
  Math.round((bytes / 1e6 / (Math.max(ms, 0.001) / 1000)) * 100) / 100;

/** Writes `mib` MiB of random data to a file in `dir` (1 MiB writes, then fsync), deletes it; MB/s. */
export async function diskWriteMbps(dir: string, mib: number): Promise<number> {
  const path = join(dir, `.benchmark-${process.pid}.tmp`);
  const chunk = randomBytes(MIB);
  const file = await open(path, 'w', 0o600);
  const started = performance.now();
  try {
    for (let i = 0; i < mib; i++) await file.write(chunk);
    await file.sync();
  } finally {
    await file.close();
    await rm(path, { force: true });
  }
  return rate(mib * MIB, performance.now() - started);
}

/** SHA-256 over `mib` MiB in memory, on the agent's own thread: a single-core CPU figure in MB/s. */
export function cpuSha256Mbps(mib: number): number {
  const chunk = randomBytes(MIB);
  const hash = createHash('sha256');
  const started = performance.now();
  for (let i = 0; i < mib; i++) hash.update(chunk);
  hash.digest();
  return rate(mib * MIB, performance.now() - started);
}

/** The agent's short self-benchmark of its machine (a few seconds on a slow disk). */
export async function runBenchmarks(dir: string, mib = 64): Promise<AgentBenchmarkResult[]> {
  return [
    { type: 'disk_write', value: await diskWriteMbps(dir, mib) },
    { type: 'cpu_sha256', value: cpuSha256Mbps(mib) },
  ];
}
