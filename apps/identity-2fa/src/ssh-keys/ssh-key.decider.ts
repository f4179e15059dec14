import { DomainError } from '@rigmarket/contracts';
import type { SshKeyEvent } from './ssh-key.events';

export type SshKeyState =
  { status: 'none' } | { status: 'active' | 'deleted'; keyId: number; userId: number; publicKey: string };

export type SshKeyCommand = { at: string } & (
  | { type: 'AddSshKey'; keyId: number; userId: number; publicKey: string }
  | { type: 'ReplaceSshKey'; requesterUserId: number; publicKey: string }
  | { type: 'DeleteSshKey'; requesterUserId: number }
);

export const initialState = (): SshKeyState => ({ status: 'none' });

export function evolve(state: SshKeyState, event: SshKeyEvent): SshKeyState {
  switch (event.type) {
    case 'SshKeyAdded':
      return { status: 'active', ...event.data };
    case 'SshKeyReplaced':
      return state.status === 'none' ? state : { ...state, publicKey: event.data.publicKey };
    case 'SshKeyDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
  }
}

/** Another account's key, or one deleted, is "no such key": an id tells nobody whether it exists. */
function owned(state: SshKeyState, requesterUserId: number) {
  if (state.status !== 'active' || state.userId !== requesterUserId)
    throw new DomainError('ssh_key_not_found', 'No such SSH key');
  return state;
}

export function decide(command: SshKeyCommand, state: SshKeyState): SshKeyEvent[] {
  switch (command.type) {
    case 'AddSshKey': {
      if (state.status !== 'none') throw new DomainError('ssh_key_exists', 'This SSH key id is taken');
      const { keyId, userId, publicKey, at } = command;
      return [{ type: 'SshKeyAdded', data: { keyId, userId, publicKey, at } }];
    }
    case 'ReplaceSshKey': {
      const key = owned(state, command.requesterUserId);
      if (key.publicKey === command.publicKey) return [];
      return [
        { type: 'SshKeyReplaced', data: { keyId: key.keyId, publicKey: command.publicKey, at: command.at } },
      ];
    }
    case 'DeleteSshKey': {
      const key = owned(state, command.requesterUserId);
      return [{ type: 'SshKeyDeleted', data: { keyId: key.keyId, at: command.at } }];
    }
  }
}

export const sshKeyDecider = { initialState, evolve, decide };
export const sshKeyStreamId = (keyId: number): string => `ssh_key-${keyId}`;
