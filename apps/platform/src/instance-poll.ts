/**
 * A renter's poll loop done right (spec, States rule 1): exited, unknown and offline never reach
 * running, so they end the wait at once with the reason instead of billing storage while a script waits
 * forever; a timeout ends it too. Used by `rigmarket wait-running`.
 */
export interface PolledInstance {
  id: number;
  actual_status: string | null;
  intended_status: string;
  status_msg: string | null;
}

export type PollOutcome = 'running' | 'dead' | 'stopped' | 'gone' | 'timeout';

export interface PollResult {
  outcome: PollOutcome;
  row: PolledInstance | null;
  waitedMs: number;
  /** One line for the renter. */
  message: string;
}

export interface PollOptions {
  timeoutMs: number;
  intervalMs: number;
  onProgress?: (row: PolledInstance | null, waitedMs: number) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEAD_STATES = ['exited', 'unknown', 'offline'];

/** What one poll says: done (with the outcome) or keep waiting (null). */
export function pollVerdict(row: PolledInstance | null): Exclude<PollOutcome, 'timeout'> | null {
  if (row === null) return 'gone';
  if (row.actual_status === 'running' && row.intended_status === 'running') return 'running';
  if (row.actual_status !== null && DEAD_STATES.includes(row.actual_status)) return 'dead';
  if (row.intended_status === 'stopped') return 'stopped';
  return null;
}

function describe(outcome: PollOutcome, row: PolledInstance | null, id: number, waitedMs: number): string {
  const after = `after ${Math.round(waitedMs / 1000)} s`;
  switch (outcome) {
    case 'running':
      return `instance ${id} is running (${after})`;
    case 'dead':
      return `instance ${id} is ${row?.actual_status ?? '?'} and will never reach running: ${row?.status_msg ?? 'destroy it and rent another offer'}`;
    case 'stopped':
      return `instance ${id} is meant to be stopped${row?.status_msg ? `: ${row.status_msg}` : ''}; start it first`;
    case 'gone':
      return `instance ${id} does not exist (destroyed, or not yours)`;
    case 'timeout':
      return `instance ${id} is still ${row?.actual_status ?? 'provisioning'} ${after}; gave up (it is still billed: stop or destroy it if it is stuck)`;
  }
}

export async function pollUntilRunning(
  id: number,
  fetchRow: () => Promise<PolledInstance | null>,
  options: PollOptions,
): Promise<PollResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = now();
  for (;;) {
    const row = await fetchRow();
    const waitedMs = now() - started;
    const verdict = pollVerdict(row);
    if (verdict !== null)
      return { outcome: verdict, row, waitedMs, message: describe(verdict, row, id, waitedMs) };
    if (waitedMs >= options.timeoutMs)
      return { outcome: 'timeout', row, waitedMs, message: describe('timeout', row, id, waitedMs) };
    options.onProgress?.(row, waitedMs);
    await sleep(Math.min(options.intervalMs, Math.max(0, options.timeoutMs - waitedMs)));
  }
}

/** GET /api/v0/instances/{id}/ with a bearer key; null when the API says there is no such instance. */
export function httpInstanceFetcher(
  baseUrl: string,
  apiKey: string,
  id: number,
): () => Promise<PolledInstance | null> {
  return async () => {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v0/instances/${id}/?owner=me`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    const body = (await res.json()) as { instances?: PolledInstance | null; msg?: string };
    if (!res.ok) throw new Error(`GET /api/v0/instances/${id}/: ${res.status} ${body.msg ?? ''}`);
    return body.instances ?? null;
  };
}
