import { DomainError, type MaintenanceEvent } from '@rigmarket/contracts';

/**
 * `maintenance-<machineId>`: the host's maintenance windows on one machine. Only the machine's owner
 * (as sync-maintenance knows it from marketplace's MachineRegistered) schedules or cancels; the handler
 * resolves ownership from its read model and passes it in, so the decider stays pure.
 */
export interface MaintenanceWindow {
  windowId: number;
  startTime: number;
  endTime: number;
  durationHours: number;
  category: string;
}

export interface MaintenanceState {
  machineId: number | null;
  windows: MaintenanceWindow[];
}

export type MaintenanceCommand =
  | {
      type: 'ScheduleMaintenance';
      machineId: number;
      windowId: number;
      ownerId: number;
      startTime: number;
      durationHours: number;
      category: string;
      at: string;
    }
  | { type: 'CancelMaintenance'; machineId: number; at: string };

export const MaintenanceErrors = {
  invalidWindow: 'invalid_args',
  overlapping: 'maintenance_overlaps',
} as const;

/** A window may not last more than a week: a longer absence is unlisting, not maintenance. */
export const MAX_DURATION_HOURS = 24 * 7;

export const maintenanceStreamId = (machineId: number): string => `maintenance-${machineId}`;

export const initialState = (): MaintenanceState => ({ machineId: null, windows: [] });

export function evolve(state: MaintenanceState, event: MaintenanceEvent): MaintenanceState {
  switch (event.type) {
    case 'MaintenanceScheduled': {
      const d = event.data;
      const window: MaintenanceWindow = {
        windowId: d.windowId,
        startTime: d.startTime,
        endTime: d.endTime,
        durationHours: d.durationHours,
        category: d.category,
      };
      return {
        machineId: d.machineId,
        windows: [...state.windows, window].sort((a, b) => a.startTime - b.startTime),
      };
    }
    case 'MaintenanceCanceled': {
      const gone = new Set(event.data.windowIds);
      return { machineId: event.data.machineId, windows: state.windows.filter((w) => !gone.has(w.windowId)) };
    }
    default:
      return state;
  }
}

const epochSeconds = (iso: string): number => Date.parse(iso) / 1000;

/** Windows that have not ended at `at`: the ones a cancel deletes and a new window must not overlap. */
export function pendingWindows(state: MaintenanceState, at: string): MaintenanceWindow[] {
  const now = epochSeconds(at);
  return state.windows.filter((w) => w.endTime > now);
}

export function decide(command: MaintenanceCommand, state: MaintenanceState): MaintenanceEvent[] {
  switch (command.type) {
    case 'ScheduleMaintenance': {
      const { startTime, durationHours } = command;
      if (!Number.isFinite(startTime) || startTime <= 0)
        throw new DomainError('bad_request', 'sdate must be the window start in epoch seconds', {
          error: MaintenanceErrors.invalidWindow,
        });
      if (!Number.isFinite(durationHours) || durationHours <= 0 || durationHours > MAX_DURATION_HOURS) {
        throw new DomainError(
          'bad_request',
          `duration must be the window length in hours, above 0 and at most ${MAX_DURATION_HOURS}`,
          { error: MaintenanceErrors.invalidWindow },
        );
      }
      const endTime = startTime + durationHours * 3600;
      if (endTime <= epochSeconds(command.at))
        throw new DomainError(
          'bad_request',
          'The window would already be over: sdate + duration is in the past',
          {
            error: MaintenanceErrors.invalidWindow,
          },
        );
      // Overlapping windows would make "how many were deleted" and the renters' notice ambiguous.
      const clash = pendingWindows(state, command.at).find(
        (w) => w.startTime < endTime && startTime < w.endTime,
      );
      if (clash)
        throw new DomainError(
          MaintenanceErrors.overlapping,
          `The window overlaps maintenance window ${clash.windowId} already scheduled on machine ${command.machineId}`,
        );
      return [
        {
          type: 'MaintenanceScheduled',
          data: {
            machineId: command.machineId,
            windowId: command.windowId,
            ownerId: command.ownerId,
            startTime,
            endTime,
            durationHours,
            category: command.category,
            at: command.at,
          },
        },
      ];
    }
    case 'CancelMaintenance': {
      const pending = pendingWindows(state, command.at);
      if (pending.length === 0) return [];
      return [
        {
          type: 'MaintenanceCanceled',
          data: { machineId: command.machineId, windowIds: pending.map((w) => w.windowId), at: command.at },
        },
      ];
    }
    default:
      return [];
  }
}

export const maintenanceDecider = { initialState, evolve, decide };
