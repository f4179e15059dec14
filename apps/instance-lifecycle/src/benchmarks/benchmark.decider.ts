import type { DomainEvent } from '@rigmarket/contracts';

/**
 * A machine's benchmark records (`benchmark-<machineId>`, `vastai search benchmarks`): what its host agent
 * measured, with the machine's GPUs and price at that moment. Private to instance-lifecycle.
 */
export type MachineBenchmarked = DomainEvent<
  'MachineBenchmarked',
  {
    machineId: number;
    gpuName: string;
    numGpus: number;
    /** The machine's GPU price ($/h per GPU) when measured; null when it was not listed. */
    dphBase: number | null;
    type: string;
    value: number;
    at: string;
  }
>;
export type BenchmarkEvent = MachineBenchmarked;

export interface BenchmarkCommand {
  type: 'RecordBenchmarks';
  machineId: number;
  gpuName: string;
  numGpus: number;
  dphBase: number | null;
  results: ReadonlyArray<{ type: string; value: number }>;
  at: string;
}

/** A type measured again within this long is not recorded: at most 6 records per type and hour. */
export const MIN_BENCHMARK_GAP_MS = 10 * 60_000;

export interface BenchmarkState {
  /** When each type was last recorded (ms since the epoch). */
  lastAt: Map<string, number>;
}

export const benchmarkStreamId = (machineId: number): string => `benchmark-${machineId}`;

export const initialState = (): BenchmarkState => ({ lastAt: new Map() });

export function evolve(state: BenchmarkState, event: BenchmarkEvent): BenchmarkState {
  state.lastAt.set(event.data.type, Date.parse(event.data.at));
  return state;
}

export function decide(command: BenchmarkCommand, state: BenchmarkState): BenchmarkEvent[] {
  const now = Date.parse(command.at);
  const seen = new Set<string>();
  return command.results.flatMap(({ type, value }) => {
    const last = state.lastAt.get(type);
    if (seen.has(type) || (last !== undefined && now - last < MIN_BENCHMARK_GAP_MS)) return [];
    seen.add(type);
    const { machineId, gpuName, numGpus, dphBase, at } = command;
    return [{ type: 'MachineBenchmarked', data: { machineId, gpuName, numGpus, dphBase, type, value, at } }];
  });
}

export const benchmarkDecider = { initialState, evolve, decide };
