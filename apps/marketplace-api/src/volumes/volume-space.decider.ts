import { DomainError, type DomainEvent } from '@rigmarket/contracts';
import { VolumeErrors } from './volume.decider';

/**
 * `volume-space-<machineId>`: the volumes that take a machine's listed volume space. Every volume
 * created on the machine reserves its size here first, so the expected-version append serializes
 * concurrent creations: two renters cannot overbook the space (the read model's free space alone could).
 * A volume asked for by an instance (volume_info create_new) is reserved or refused here once per
 * instance, which makes marketplace's reaction to it idempotent. Private to marketplace.
 */
export type VolumeSpaceReserved = DomainEvent<
  'VolumeSpaceReserved',
  { machineId: number; volumeId: number; sizeGb: number; at: string; instanceId?: number }
>;
export type VolumeSpaceReleased = DomainEvent<
  'VolumeSpaceReleased',
  { machineId: number; volumeId: number; at: string }
>;
/** An instance's volume could not get its space (taken meanwhile, offer unlisted): volumeId is never created. */
export type VolumeSpaceRefused = DomainEvent<
  'VolumeSpaceRefused',
  { machineId: number; volumeId: number; instanceId: number; sizeGb: number; reason: string; at: string }
>;
export type VolumeSpaceEvent = VolumeSpaceReserved | VolumeSpaceReleased | VolumeSpaceRefused;

export interface VolumeSpaceState {
  /** volumeId -> GB it holds */
  reserved: Record<number, number>;
  /** instanceId -> the volume reserved for it, or why it was refused (null = reserved) */
  forInstance: Record<number, { volumeId: number; refused: string | null }>;
}

export type VolumeSpaceCommand = { at: string; machineId: number; volumeId: number } & (
  | { type: 'ReserveSpace'; sizeGb: number; listedGb: number }
  | { type: 'ReserveSpaceForInstance'; instanceId: number; sizeGb: number; listedGb: number; listed: boolean }
  | { type: 'ReleaseSpace' }
);

export const initialState = (): VolumeSpaceState => ({ reserved: {}, forInstance: {} });

export function evolve(state: VolumeSpaceState, event: VolumeSpaceEvent): VolumeSpaceState {
  const reserved = { ...state.reserved };
  const forInstance = { ...state.forInstance };
  switch (event.type) {
    case 'VolumeSpaceReserved':
      reserved[event.data.volumeId] = event.data.sizeGb;
      if (event.data.instanceId !== undefined)
        forInstance[event.data.instanceId] = { volumeId: event.data.volumeId, refused: null };
      break;
    case 'VolumeSpaceReleased':
      delete reserved[event.data.volumeId];
      break;
    case 'VolumeSpaceRefused':
      forInstance[event.data.instanceId] = { volumeId: event.data.volumeId, refused: event.data.reason };
      break;
  }
  return { reserved, forInstance };
}

export const usedGb = (state: VolumeSpaceState): number =>
  Object.values(state.reserved).reduce((sum, gb) => sum + gb, 0);

/** Why an instance's volume cannot be reserved, or null when it fits. */
function refusal(
  command: Extract<VolumeSpaceCommand, { type: 'ReserveSpaceForInstance' }>,
  state: VolumeSpaceState,
): string | null {
  if (!command.listed) return `volume offer ${command.machineId} is no longer listed`;
  if (!Number.isInteger(command.sizeGb) || command.sizeGb < 1)
    return `size ${command.sizeGb} is not a whole number of GB >= 1`;
  const free = Math.max(0, command.listedGb - usedGb(state));
  if (command.sizeGb > free)
    return `volume offer ${command.machineId} has ${free} GB free now, not ${command.sizeGb} (the space was taken meanwhile)`;
  return null;
}

export function decide(command: VolumeSpaceCommand, state: VolumeSpaceState): VolumeSpaceEvent[] {
  switch (command.type) {
    case 'ReserveSpace': {
      if (state.reserved[command.volumeId] !== undefined) return [];
      const free = command.listedGb - usedGb(state);
      if (command.sizeGb > free)
        throw new DomainError(
          VolumeErrors.noSpace,
          `The volume offer has ${Math.max(0, free)} GB free, not ${command.sizeGb}`,
        );
      return [
        {
          type: 'VolumeSpaceReserved',
          data: {
            machineId: command.machineId,
            volumeId: command.volumeId,
            sizeGb: command.sizeGb,
            at: command.at,
          },
        },
      ];
    }
    case 'ReserveSpaceForInstance': {
      // Once per instance: a repeated reaction finds the first outcome (and its volume id) in the state.
      if (state.forInstance[command.instanceId] !== undefined) return [];
      const { machineId, volumeId, instanceId, sizeGb, at } = command;
      const reason = refusal(command, state);
      if (reason !== null)
        return [
          { type: 'VolumeSpaceRefused', data: { machineId, volumeId, instanceId, sizeGb, reason, at } },
        ];
      return [{ type: 'VolumeSpaceReserved', data: { machineId, volumeId, sizeGb, at, instanceId } }];
    }
    case 'ReleaseSpace':
      if (state.reserved[command.volumeId] === undefined) return [];
      return [
        {
          type: 'VolumeSpaceReleased',
          data: { machineId: command.machineId, volumeId: command.volumeId, at: command.at },
        },
      ];
  }
}

/**
 * The stream grows with use (every volume made on the machine adds its reservation and release, for the machine's whole life), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const volumeSpaceDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const volumeSpaceStreamId = (machineId: number): string => `volume-space-${machineId}`;
