/**
 * `npm start` on an empty data folder lists a few simulated GPU hosts (owned by the admin, verified) and
 * grants the admin demo credit, so a newcomer can search offers and rent at once. The hosts have no host
 * agent: instance-lifecycle's simulated host serves them (realistic timings, synthetic logs).
 * It goes through the public API like any host would.
 */
import { EPYC_RIG } from './rig-hardware';

export interface DemoHost {
  hostname: string;
  gpu_name: string;
  num_gpus: number;
  gpu_ram: number;
  price_gpu: number;
  geolocation: string;
  public_ipaddr: string;
}

export const DEMO_HOSTS: readonly DemoHost[] = [
  {
    hostname: 'demo-4090',
    gpu_name: 'RTX 4090',
    num_gpus: 4,
    gpu_ram: 24564,
    price_gpu: 0.4,
    geolocation: 'US',
    public_ipaddr: '198.51.100.10',
  },
  {
    hostname: 'demo-a100',
    gpu_name: 'A100 SXM4',
    num_gpus: 8,
    gpu_ram: 81920,
    price_gpu: 1.2,
    geolocation: 'DE',
    public_ipaddr: '198.51.100.11',
  },
  {
    hostname: 'demo-3090',
    gpu_name: 'RTX 3090',
    num_gpus: 2,
    gpu_ram: 24576,
    price_gpu: 0.2,
    geolocation: 'CA',
    public_ipaddr: '198.51.100.12',
  },
];

export const DEMO_CREDIT = 100;

async function call(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Retries while the admin's key and user are still on their way to the marketplace's projections. */
async function withRetry<T>(what: string, attempt: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Lists one simulated host as the admin, through the public API: registers the machine (EPYC_RIG with
 * `host`'s GPUs, twice its memory, NVMe disks and 200 ports), lists its ask (`host.price_gpu` per GPU-hour, half of it as the minimum bid) and verifies
 * it. Retries while the admin's key is still on its way to the marketplace. Returns the machine id.
 */
export async function listDemoHost(baseUrl: string, adminKey: string, host: DemoHost): Promise<number> {
  const registered = await withRetry('register a demo machine', () =>
    call(baseUrl, adminKey, 'POST', '/api/v0/machines/', {
      ...EPYC_RIG,
      hostname: host.hostname,
      gpu_name: host.gpu_name,
      num_gpus: host.num_gpus,
      gpu_ram: host.gpu_ram,
      cpu_ram: 257000,
      disk_name: 'NVMe',
      direct_port_count: 200,
      public_ipaddr: host.public_ipaddr,
      geolocation: host.geolocation,
    }),
  );
  const machineId = Number(registered.machine_id);
  await call(baseUrl, adminKey, 'PUT', '/api/v0/machines/create_asks/', {
    machine: machineId,
    price_gpu: host.price_gpu,
    price_disk: 0.15,
    price_inetu: 0.01,
    price_inetd: 0.01,
    price_min_bid: host.price_gpu / 2,
    min_chunk: 1,
    end_date: null,
    credit_discount_max: 0.4,
    duration: null,
    vol_size: null,
    vol_price: null,
  });
  await withRetry('verify a demo machine', () =>
    call(baseUrl, adminKey, 'PUT', `/api/v0/machines/${machineId}/verification/`, {
      verification: 'verified',
    }),
  );
  return machineId;
}

export async function seedDemoHosts(baseUrl: string, adminKey: string): Promise<number[]> {
  const me = await withRetry('the admin user', () =>
    call(baseUrl, adminKey, 'GET', '/api/v0/users/current/', undefined),
  );
  const machineIds: number[] = [];
  for (const host of DEMO_HOSTS) machineIds.push(await listDemoHost(baseUrl, adminKey, host));
  await withRetry('grant demo credit', () =>
    call(baseUrl, adminKey, 'POST', '/api/v0/credit/', {
      user_id: me.id,
      amount: DEMO_CREDIT,
      note: 'demo credit',
    }),
  );
  return machineIds;
}
