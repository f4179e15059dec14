import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBenchmarks } from './benchmarks';

describe('the agent self-benchmark', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('measures disk writes and SHA-256 in MB/s and leaves no file behind', async () => {
    const results = await runBenchmarks(dir, 4);
    expect(results.map((r) => r.type)).toEqual(['disk_write', 'cpu_sha256']);
    for (const r of results) expect(r.value).toBeGreaterThan(0);
    expect(readdirSync(dir)).toEqual([]);
  });
});
