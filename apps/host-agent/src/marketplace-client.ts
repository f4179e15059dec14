import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineRegistration } from './hardware/detect';

/** The marketplace routes a host agent calls, with the host owner's key. */
export class MarketplaceClient {
  constructor(
    private readonly apiUrl: string,
    private readonly apiKey: string,
  ) {}

  async registerMachine(machine: MachineRegistration): Promise<number> {
    const body = await this.call('POST', '/api/v0/machines', machine);
    const machineId = Number(body.machine_id);
    if (!Number.isInteger(machineId))
      throw new Error(`registration answered without machine_id: ${JSON.stringify(body)}`);
    return machineId;
  }

  async heartbeat(machineId: number): Promise<void> {
    await this.call('POST', `/api/v0/machines/${machineId}/heartbeat`, {});
  }

  private async call(method: string, path: string, payload: unknown): Promise<Record<string, unknown>> {
    const url = new URL(path, this.apiUrl);
    const response = await fetch(url, {
      method,
      headers: { Authorization: `Bearer ${this.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(15_000),
    }).catch((error: unknown) => {
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new Error(
        `${method} ${url.toString()} failed: ${error instanceof Error ? error.message : String(error)}${cause ? ` (${cause})` : ''}`,
      );
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  }
}

/** What the agent remembers across restarts, so that a restart does not register a second machine. */
export interface AgentState {
  apiUrl: string;
  machineId: number;
}

const STATE_FILE = 'agent-state.json';

export async function loadAgentState(stateDir: string, apiUrl: string): Promise<AgentState | null> {
  try {
    const state = JSON.parse(await readFile(join(stateDir, STATE_FILE), 'utf8')) as Partial<AgentState>;
    // A state file for another platform does not apply here.
    return state.apiUrl === apiUrl && Number.isInteger(state.machineId)
      ? { apiUrl, machineId: Number(state.machineId) }
      : null;
  } catch {
    return null;
  }
}

export async function saveAgentState(stateDir: string, state: AgentState): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  const path = join(stateDir, STATE_FILE);
  await writeFile(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}
