import { type PolledInstance, pollUntilRunning, pollVerdict } from './instance-poll';

const row = (
  actual_status: string | null,
  intended_status = 'running',
  status_msg: string | null = null,
): PolledInstance => ({ id: 5, actual_status, intended_status, status_msg });

/** Serves the rows in turn (the last one forever) on a fake clock that each sleep advances. */
function scripted(rows: Array<PolledInstance | null>) {
  let t = 0;
  let i = 0;
  return {
    fetchRow: async () => rows[Math.min(i++, rows.length - 1)] ?? null,
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
    polls: () => i,
  };
}

describe("a renter's poll loop", () => {
  it('waits through provisioning and loading until running', async () => {
    const s = scripted([row(null), row('loading'), row('loading'), row('running')]);
    const seen: Array<string | null> = [];
    const result = await pollUntilRunning(5, s.fetchRow, {
      timeoutMs: 60_000,
      intervalMs: 10_000,
      now: s.now,
      sleep: s.sleep,
      onProgress: (r) => seen.push(r?.actual_status ?? null),
    });
    expect(result).toMatchObject({ outcome: 'running', waitedMs: 30_000 });
    expect(seen).toEqual([null, 'loading', 'loading']);
  });

  it.each(['exited', 'unknown', 'offline'])(
    'stops at once on %s, with the reason, instead of waiting forever',
    async (dead) => {
      const s = scripted([row('loading'), row(dead, 'running', 'The container exited with code 1')]);
      const result = await pollUntilRunning(5, s.fetchRow, {
        timeoutMs: 600_000,
        intervalMs: 10_000,
        now: s.now,
        sleep: s.sleep,
      });
      expect(result.outcome).toBe('dead');
      expect(result.waitedMs).toBe(10_000);
      expect(result.message).toContain(`is ${dead} and will never reach running`);
    },
  );

  it('gives up at the timeout and says the instance is still billed', async () => {
    const s = scripted([row('loading')]);
    const result = await pollUntilRunning(5, s.fetchRow, {
      timeoutMs: 25_000,
      intervalMs: 10_000,
      now: s.now,
      sleep: s.sleep,
    });
    expect(result).toMatchObject({ outcome: 'timeout', waitedMs: 25_000 });
    expect(result.message).toContain('still billed');
    expect(s.polls()).toBe(4);
  });

  it('ends on a destroyed instance and on one meant to be stopped', () => {
    expect(pollVerdict(null)).toBe('gone');
    expect(pollVerdict(row('running', 'stopped'))).toBe('stopped');
    expect(pollVerdict(row('stopped', 'running'))).toBeNull();
  });
});
