import { ApiError, type VolumeEvent } from '@rigmarket/contracts';

export type VolumeState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; volumeId: number; ownerId: number; machineId: number; sizeGb: number };

export type VolumeCommand = { at: string } & (
  | { type: 'CreateVolume'; volumeId: number; ownerId: number; machineId: number; sizeGb: number; name: string | null; priceDisk: number; freeGb: number }
  | { type: 'DeleteVolume'; requesterId: number }
);

export const VolumeErrors = {
  notFound: 'no_such_volume',
  exists: 'volume_exists',
  invalidSize: 'invalid_size',
  noSpace: 'insufficient_space',
} as const;

export const initialState = (): VolumeState => ({ status: 'none' });

export function evolve(state: VolumeState, event: VolumeEvent): VolumeState {
  switch (event.type) {
    case 'VolumeCreated':
      return { status: 'active', volumeId: event.data.volumeId, ownerId: event.data.ownerId, machineId: event.data.machineId, sizeGb: event.data.sizeGb };
    case 'VolumeDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
  }
}

export function decide(command: VolumeCommand, state: VolumeState): VolumeEvent[] {
  switch (command.type) {
    case 'CreateVolume': {
      if (state.status !== 'none') throw ApiError.conflict('This volume id is taken', VolumeErrors.exists);
      if (!Number.isInteger(command.sizeGb) || command.sizeGb < 1) throw new ApiError(400, VolumeErrors.invalidSize, 'size must be a whole number of GB >= 1');
      if (command.sizeGb > command.freeGb) {
        throw new ApiError(400, VolumeErrors.noSpace, `The volume offer has ${command.freeGb} GB free, not ${command.sizeGb}`);
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
          },
        },
      ];
    }
    case 'DeleteVolume': {
      if (state.status !== 'active' || state.ownerId !== command.requesterId) throw ApiError.notFound('No such volume', VolumeErrors.notFound);
      return [{ type: 'VolumeDeleted', data: { volumeId: state.volumeId, machineId: state.machineId, sizeGb: state.sizeGb, deletedAt: command.at } }];
    }
  }
}

export const volumeDecider = { initialState, evolve, decide };
export const volumeStreamId = (volumeId: number): string => `volume-${volumeId}`;
