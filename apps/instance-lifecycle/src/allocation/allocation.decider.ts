import { DomainError, type DomainEvent } from '@rigmarket/contracts';

/**
 * `allocation-<machineId>`: which instances hold a machine's GPUs. Every accept of an offer on the
 * machine goes through this one stream, so the expected-version append serializes them: of two
 * renters accepting the same GPUs at once exactly one gets them. Private to instance-lifecycle.
 */
/** bid: $/hour of an interruptible rental, null = on-demand (never preempted). Re-emitted when a bid changes. */
export type GpusAllocated = DomainEvent<
  'GpusAllocated',
  { machineId: number; instanceId: number; numGpus: number; bid?: number | null; at: string }
>;
/** outbid: the GPUs were taken by a higher bid or an on-demand rental. */
export type GpusReleased = DomainEvent<
  'GpusReleased',
  { machineId: number; instanceId: number; numGpus: number; outbid?: boolean; at: string }
>;
export type AllocationEvent = GpusAllocated | GpusReleased;

export interface Holding {
  numGpus: number;
  bid: number | null;
}

export interface AllocationState {
  /** instanceId -> what it holds */
  held: Record<number, Holding>;
}

export type AllocationCommand = { at: string; machineId: number } & (
  | { type: 'AllocateGpus'; instanceId: number; numGpus: number; machineGpus: number; bid: number | null }
  | { type: 'ReleaseGpus'; instanceId: number }
  | { type: 'ChangeBid'; instanceId: number; bid: number }
);

export const AllocationErrors = { unavailable: 'offer_unavailable' } as const;

export const initialState = (): AllocationState => ({ held: {} });

export function evolve(state: AllocationState, event: AllocationEvent): AllocationState {
  switch (event.type) {
    case 'GpusAllocated':
      return {
        held: {
          ...state.held,
          [event.data.instanceId]: { numGpus: event.data.numGpus, bid: event.data.bid ?? null },
        },
      };
    case 'GpusReleased': {
      const held = { ...state.held };
      delete held[event.data.instanceId];
      return { held };
    }
  }
}

export const gpusInUse = (state: AllocationState): number =>
  Object.values(state.held).reduce((a, h) => a + h.numGpus, 0);

export function decide(command: AllocationCommand, state: AllocationState): AllocationEvent[] {
  switch (command.type) {
    case 'AllocateGpus': {
      if (state.held[command.instanceId] !== undefined) return [];
      let free = command.machineGpus - gpusInUse(state);
      // Interruptible holdings a higher bid (or any on-demand rental) may take, lowest bid first.
      const preemptible = Object.entries(state.held)
        .filter(([, h]) => h.bid !== null && (command.bid === null || h.bid < command.bid))
        .sort(([, a], [, b]) => (a.bid ?? 0) - (b.bid ?? 0));
      const outbid: AllocationEvent[] = [];
      for (const [id, holding] of preemptible) {
        if (free >= command.numGpus) break;
        free += holding.numGpus;
        outbid.push({
          type: 'GpusReleased',
          data: {
            machineId: command.machineId,
            instanceId: Number(id),
            numGpus: holding.numGpus,
            outbid: true,
            at: command.at,
          },
        });
      }
      if (command.numGpus > free) {
        throw new DomainError(
          AllocationErrors.unavailable,
          `This offer is no longer available: ${command.machineGpus - gpusInUse(state)} of the machine's ${command.machineGpus} GPUs are free; search again`,
        );
      }
      return [
        ...outbid,
        {
          type: 'GpusAllocated',
          data: {
            machineId: command.machineId,
            instanceId: command.instanceId,
            numGpus: command.numGpus,
            bid: command.bid,
            at: command.at,
          },
        },
      ];
    }
    case 'ReleaseGpus': {
      const holding = state.held[command.instanceId];
      if (holding === undefined) return [];
      return [
        {
          type: 'GpusReleased',
          data: {
            machineId: command.machineId,
            instanceId: command.instanceId,
            numGpus: holding.numGpus,
            at: command.at,
          },
        },
      ];
    }
    case 'ChangeBid': {
      const holding = state.held[command.instanceId];
      if (holding === undefined || holding.bid === command.bid) return [];
      return [
        {
          type: 'GpusAllocated',
          data: {
            machineId: command.machineId,
            instanceId: command.instanceId,
            numGpus: holding.numGpus,
            bid: command.bid,
            at: command.at,
          },
        },
      ];
    }
  }
}

/**
 * The stream grows with use (every rental of the machine adds its allocation and release, for the machine's whole life), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const allocationDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const allocationStreamId = (machineId: number): string => `allocation-${machineId}`;
