import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '@rigmarket/testing';
import { freePort } from './crash-workload';

export type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/**
 * Three renters renting 1-GPU offers of the demo hosts, stopping, starting and destroying them, one
 * client creating, editing and deleting templates, one creating and revoking API keys and granting
 * credit, for `durationMs`. Answers the instances still live at the end.
 */
export async function workload(call: Call, durationMs: number): Promise<number[]> {
  const offers = await eventually(
    async () => {
      const found = (await call('POST', '/bundles/', {})).body.offers as Array<{ id: number }> | undefined;
      return found && found.length >= 3 ? found : undefined;
    },
    30_000,
    'the demo offers',
  );
  const oneGpu = [...new Set(offers.map((o) => Math.floor(o.id / 1000)))].map((m) => m * 1000 + 1);
  const deadline = Date.now() + durationMs;
  const going = () => Date.now() < deadline;
  const pause = () => new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
  const pick = <T>(list: T[]): T | undefined => list.splice(Math.floor(Math.random() * list.length), 1)[0];

  const live: number[] = [];
  const renter = async () => {
    while (going()) {
      if (live.length < 6) {
        const res = await call('PUT', `/asks/${oneGpu[Math.floor(Math.random() * oneGpu.length)]}/`, {
          image: 'busybox',
          runtype: 'ssh_direct',
          disk: 8,
        });
        if (res.status === 200) live.push(res.body.new_contract as number);
      }
      const id = pick(live);
      if (id !== undefined) {
        const roll = Math.random();
        if (roll < 0.3) await call('PUT', `/instances/${id}/`, { state: 'stopped' });
        else if (roll < 0.55) await call('PUT', `/instances/${id}/`, { state: 'running' });
        if (roll < 0.55 || (await call('DELETE', `/instances/${id}/`)).status !== 200) live.push(id);
      }
      await pause();
    }
  };
  const templates = async () => {
    const hashes: string[] = [];
    for (let i = 0; going(); i += 1) {
      const made = await call('POST', '/template/', { name: `t${i}`, image: 'busybox' });
      const hash = (made.body.template as { hash_id?: string } | undefined)?.hash_id;
      if (hash) hashes.push(hash);
      const edit = pick(hashes);
      if (edit && Math.random() < 0.5) {
        await call('PUT', '/template/', { hash_id: edit, name: `e${i}` });
        hashes.push(edit);
      } else if (edit) await call('DELETE', '/template/', { hash_id: edit });
      await pause();
    }
  };
  const keysAndCredit = async () => {
    while (going()) {
      const made = await call('POST', '/auth/apikeys/', { name: 'workload' });
      const keyId = made.body.id as number | undefined;
      if (keyId !== undefined && Math.random() < 0.7) await call('DELETE', `/auth/apikeys/${keyId}/`);
      await call('POST', '/credit', { user_id: 1, amount: 0.37 });
      await pause();
    }
  };
  await Promise.all([renter(), renter(), renter(), templates(), keysAndCredit()]);
  return live;
}

/** The embedded platform as its own process (apps/platform/dist/main.js), answering its admin's calls. */
export interface EmbeddedProcess {
  proc: ChildProcess;
  /** Where it answers: `http://127.0.0.1:<port>`. */
  base: string;
  /** A call as the admin; `onAnswer` (given to start) sees each answer. */
  call: Call;
  /** What it printed so far. */
  output(): string;
  /** SIGTERM, and its exit code once it exited. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node apps/platform/dist/main.js` on `dataDir` (billing every second) and waits until it answers.
 */
export async function startEmbeddedProcess(
  dataDir: string,
  adminKey: string,
  onAnswer?: (method: string, path: string, status: number) => void,
  /** The port to listen on (default a free one): a platform moved to another store can keep its address. */
  port?: number,
): Promise<EmbeddedProcess> {
  port ??= await freePort();
  let output = '';
  const proc = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'main.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      RIGMARKET_DATA_DIR: dataDir,
      RIGMARKET_ADMIN_KEY: adminKey,
      RIGMARKET_BILLING_INTERVAL_MS: '1000',
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const call: Call = async (method, path, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v0${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    onAnswer?.(method, path, res.status);
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  await eventually(
    async () => ((await call('GET', '/users/current/')).status === 200 ? true : undefined),
    60_000,
    'the platform answering',
  ).catch((error: Error) => {
    proc.kill('SIGKILL');
    throw new Error(`${error.message}; it printed:\n${output}`);
  });
  return {
    proc,
    base: `http://127.0.0.1:${port}`,
    call,
    output: () => output,
    stop: () => {
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
      proc.kill('SIGTERM');
      return exited;
    },
  };
}
