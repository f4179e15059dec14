import { ApiError, type DomainEvent } from '@rigmarket/contracts';
import { VolumeErrors } from './volume.decider';

/**
 * `volume-space-<machineId>`: the volumes that take a machine's listed volume space. Every volume
 * created on the machine reserves its size here first, so the expected-version append serializes
 * concurrent creations: two renters cannot overbook the space (the read model's free space alone could).
 * Private to marketplace.
 */
export type VolumeSpaceReserved = DomainEvent<'VolumeSpaceReserved', { machineId: number; volumeId: number; sizeGb: number; at: string }>;
export type VolumeSpaceReleased = DomainEvent<'VolumeSpaceReleased', { machineId: number; volumeId: number; at: string }>;
export type VolumeSpaceEvent = VolumeSpaceReserved | VolumeSpaceReleased;

export interface VolumeSpaceState {
  /** volumeId -> GB it holds */
  reserved: Record<number, number>;
}

export type VolumeSpaceCommand = { at: string; machineId: number; volumeId: number } & (
  | { type: 'ReserveSpace'; sizeGb: number; listedGb: number }
  | { type: 'ReleaseSpace' }
);

export const initialState = (): VolumeSpaceState => ({ reserved: {} });

export function evolve(state: VolumeSpaceState, event: VolumeSpaceEvent): VolumeSpaceState {
  const reserved = { ...state.reserved };
  if (event.type === 'VolumeSpaceReserved') reserved[event.data.volumeId] = event.data.sizeGb;
  else delete reserved[event.data.volumeId];
  return { reserved };
}

export const usedGb = (state: VolumeSpaceState): number => Object.values(state.reserved).reduce((sum, gb) => sum + gb, 0);

export function decide(command: VolumeSpaceCommand, state: VolumeSpaceState): VolumeSpaceEvent[] {
  switch (command.type) {
    case 'ReserveSpace': {
      if (state.reserved[command.volumeId] !== undefined) return [];
      const free = command.listedGb - usedGb(state);
      if (command.sizeGb > free) throw new ApiError(400, VolumeErrors.noSpace, `The volume offer has ${Math.max(0, free)} GB free, not ${command.sizeGb}`);
      return [{ type: 'VolumeSpaceReserved', data: { machineId: command.machineId, volumeId: command.volumeId, sizeGb: command.sizeGb, at: command.at } }];
    }
    case 'ReleaseSpace':
      if (state.reserved[command.volumeId] === undefined) return [];
      return [{ type: 'VolumeSpaceReleased', data: { machineId: command.machineId, volumeId: command.volumeId, at: command.at } }];
  }
}

export const volumeSpaceDecider = { initialState, evolve, decide };
export const volumeSpaceStreamId = (machineId: number): string => `volume-space-${machineId}`;
