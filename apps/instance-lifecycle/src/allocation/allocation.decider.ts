import { ApiError, type DomainEvent } from '@rigmarket/contracts';

/**
 * `allocation-<machineId>`: which instances hold a machine's GPUs. Every accept of an offer on the
 * machine goes through this one stream, so the expected-version append serializes them: of two
 * renters accepting the same GPUs at once exactly one gets them. Private to instance-lifecycle.
 */
export type GpusAllocated = DomainEvent<'GpusAllocated', { machineId: number; instanceId: number; numGpus: number; at: string }>;
export type GpusReleased = DomainEvent<'GpusReleased', { machineId: number; instanceId: number; numGpus: number; at: string }>;
export type AllocationEvent = GpusAllocated | GpusReleased;

export interface AllocationState {
  /** instanceId -> GPUs held */
  held: Record<number, number>;
}

export type AllocationCommand = { at: string; machineId: number } & (
  | { type: 'AllocateGpus'; instanceId: number; numGpus: number; machineGpus: number }
  | { type: 'ReleaseGpus'; instanceId: number }
);

export const AllocationErrors = { unavailable: 'offer_unavailable' } as const;

export const initialState = (): AllocationState => ({ held: {} });

export function evolve(state: AllocationState, event: AllocationEvent): AllocationState {
  switch (event.type) {
    case 'GpusAllocated':
      return { held: { ...state.held, [event.data.instanceId]: event.data.numGpus } };
    case 'GpusReleased': {
      const held = { ...state.held };
      delete held[event.data.instanceId];
      return { held };
    }
  }
}

export const gpusInUse = (state: AllocationState): number => Object.values(state.held).reduce((a, b) => a + b, 0);

export function decide(command: AllocationCommand, state: AllocationState): AllocationEvent[] {
  switch (command.type) {
    case 'AllocateGpus': {
      if (state.held[command.instanceId] !== undefined) return [];
      const free = command.machineGpus - gpusInUse(state);
      if (command.numGpus > free) {
        throw ApiError.conflict(`This offer is no longer available: ${free} of the machine's ${command.machineGpus} GPUs are free; search again`, AllocationErrors.unavailable);
      }
      return [{ type: 'GpusAllocated', data: { machineId: command.machineId, instanceId: command.instanceId, numGpus: command.numGpus, at: command.at } }];
    }
    case 'ReleaseGpus': {
      const numGpus = state.held[command.instanceId];
      if (numGpus === undefined) return [];
      return [{ type: 'GpusReleased', data: { machineId: command.machineId, instanceId: command.instanceId, numGpus, at: command.at } }];
    }
  }
}

export const allocationDecider = { initialState, evolve, decide };
export const allocationStreamId = (machineId: number): string => `allocation-${machineId}`;
