import { DomainError, type VolumeEvent } from '@rigmarket/contracts';

/** instanceId: the instance whose volume_info create_new asked for this volume (null for PUT /volumes). */
export type VolumeState =
  | { status: 'none' }
  | {
      status: 'active' | 'deleted' | 'refused';
      volumeId: number;
      ownerId: number;
      machineId: number;
      sizeGb: number;
      instanceId: number | null;
    };

export interface NewVolume {
  volumeId: number;
  ownerId: number;
  machineId: number;
  sizeGb: number;
}

export type VolumeCommand = { at: string } & (
  | ({
      type: 'CreateVolume';
      name: string | null;
      priceDisk: number;
      freeGb: number;
      instanceId?: number;
      /** `clone volume`: the owner's volume whose data the new one gets (its size is the least allowed). */
      cloneOf?: CloneSource;
    } & NewVolume)
  | ({ type: 'RefuseVolume'; instanceId: number; reason: string } & NewVolume)
  | { type: 'DeleteVolume'; requesterId: number }
);

/** The volume a clone copies, as its stream has it. */
export interface CloneSource {
  volumeId: number;
  machineId: number;
  sizeGb: number;
}

export const VolumeErrors = {
  notFound: 'no_such_volume',
  exists: 'volume_exists',
  invalidSize: 'invalid_size',
  noSpace: 'insufficient_space',
} as const;

export const initialState = (): VolumeState => ({ status: 'none' });

export function evolve(state: VolumeState, event: VolumeEvent): VolumeState {
  switch (event.type) {
    case 'VolumeCreated': {
      const { volumeId, ownerId, machineId, sizeGb } = event.data;
      return {
        status: 'active',
        volumeId,
        ownerId,
        machineId,
        sizeGb,
        instanceId: event.data.instanceId ?? null,
      };
    }
    case 'VolumeRefused': {
      const { volumeId, ownerId, machineId, sizeGb, instanceId } = event.data;
      return { status: 'refused', volumeId, ownerId, machineId, sizeGb, instanceId };
    }
    case 'VolumeDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
  }
}

export function decide(command: VolumeCommand, state: VolumeState): VolumeEvent[] {
  switch (command.type) {
    case 'CreateVolume': {
      // An instance's volume is created once, whatever the number of reactions to its InstanceCreated.
      if (
        state.status !== 'none' &&
        command.instanceId !== undefined &&
        state.instanceId === command.instanceId
      )
        return [];
      if (state.status !== 'none') throw new DomainError(VolumeErrors.exists, 'This volume id is taken');
      if (!Number.isInteger(command.sizeGb) || command.sizeGb < 1)
        throw new DomainError(VolumeErrors.invalidSize, 'size must be a whole number of GB >= 1');
      if (command.cloneOf && command.sizeGb < command.cloneOf.sizeGb)
        throw new DomainError(
          VolumeErrors.invalidSize,
          `size ${command.sizeGb} GB is smaller than volume ${command.cloneOf.volumeId} (${command.cloneOf.sizeGb} GB), which it copies`,
        );
      if (command.sizeGb > command.freeGb) {
        throw new DomainError(
          VolumeErrors.noSpace,
          `The volume offer has ${command.freeGb} GB free, not ${command.sizeGb}`,
        );
      }
      return [
        {
          type: 'VolumeCreated',
          data: {
            volumeId: command.volumeId,
            ownerId: command.ownerId,
            machineId: command.machineId,
            sizeGb: command.sizeGb,
            name: command.name,
            priceDisk: command.priceDisk,
            createdAt: command.at,
            ...(command.instanceId !== undefined ? { instanceId: command.instanceId } : {}),
            ...(command.cloneOf
              ? { cloneOf: { volumeId: command.cloneOf.volumeId, machineId: command.cloneOf.machineId } }
              : {}),
          },
        },
      ];
    }
    case 'RefuseVolume': {
      if (state.status !== 'none' && state.instanceId === command.instanceId) return [];
      if (state.status !== 'none') throw new DomainError(VolumeErrors.exists, 'This volume id is taken');
      const { volumeId, instanceId, ownerId, machineId, sizeGb, reason, at } = command;
      return [
        { type: 'VolumeRefused', data: { volumeId, instanceId, ownerId, machineId, sizeGb, reason, at } },
      ];
    }
    case 'DeleteVolume': {
      if (state.status !== 'active' || state.ownerId !== command.requesterId)
        throw new DomainError(VolumeErrors.notFound, 'No such volume');
      return [
        {
          type: 'VolumeDeleted',
          data: {
            volumeId: state.volumeId,
            machineId: state.machineId,
            sizeGb: state.sizeGb,
            deletedAt: command.at,
          },
        },
      ];
    }
  }
}

/** The volume a requester may clone: their own live one; anything else is no such volume (404, as for an unknown id). */
export function cloneSource(state: VolumeState, requesterId: number): CloneSource {
  if (state.status !== 'active' || state.ownerId !== requesterId)
    throw new DomainError(VolumeErrors.notFound, 'No such volume');
  return { volumeId: state.volumeId, machineId: state.machineId, sizeGb: state.sizeGb };
}

export const volumeDecider = { initialState, evolve, decide };
export const volumeStreamId = (volumeId: number): string => `volume-${volumeId}`;
