import type { VolumeCopyEvent } from '@rigmarket/contracts';

/**
 * `volumecopy-<volumeId>`: the data of a cloned volume (`vastai clone volume`) copied from the source
 * volume's host agent to the new volume's, as instance-lifecycle relayed it. It starts when the source agent
 * has opened the volume's tar and ends once, completed or failed; every later report is ignored.
 */
export type VolumeCopyStatus = 'none' | 'running' | 'completed' | 'failed';

export interface VolumeCopyState {
  status: VolumeCopyStatus;
}

export type VolumeCopyCommand = { volumeId: number; at: string } & (
  | { type: 'StartVolumeCopy'; srcVolumeId: number }
  | { type: 'CompleteVolumeCopy'; bytesCopied: number }
  | { type: 'FailVolumeCopy'; reason: string }
);

export const volumeCopyStreamId = (volumeId: number): string => `volumecopy-${volumeId}`;

export const initialState = (): VolumeCopyState => ({ status: 'none' });

export function evolve(state: VolumeCopyState, event: VolumeCopyEvent): VolumeCopyState {
  switch (event.type) {
    case 'VolumeCopyStarted':
      return { status: 'running' };
    case 'VolumeCopyCompleted':
      return { status: 'completed' };
    case 'VolumeCopyFailed':
      return { status: 'failed' };
    default:
      return state;
  }
}

export function decide(command: VolumeCopyCommand, state: VolumeCopyState): VolumeCopyEvent[] {
  if (state.status === 'completed' || state.status === 'failed') return [];
  const { volumeId, at } = command;
  switch (command.type) {
    case 'StartVolumeCopy':
      if (state.status !== 'none') return [];
      return [{ type: 'VolumeCopyStarted', data: { volumeId, srcVolumeId: command.srcVolumeId, at } }];
    case 'CompleteVolumeCopy':
      if (state.status !== 'running') return [];
      return [{ type: 'VolumeCopyCompleted', data: { volumeId, bytesCopied: command.bytesCopied, at } }];
    case 'FailVolumeCopy':
      return [{ type: 'VolumeCopyFailed', data: { volumeId, reason: command.reason, at } }];
    default:
      return [];
  }
}

export const volumeCopyDecider = { initialState, evolve, decide };
