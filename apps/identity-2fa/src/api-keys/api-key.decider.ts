import {
  DomainError,
  type ApiKeyCreated,
  type ApiKeyEvent,
  type ApiKeyKind,
  type KeyScope,
} from '@rigmarket/contracts';

export type ApiKeyState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; keyId: number; userId: number; kind: ApiKeyKind; permissions: KeyScope };

export type ApiKeyCommand =
  | ({ type: 'CreateApiKey'; at: string } & Omit<ApiKeyCreated['data'], 'createdAt'>)
  | { type: 'ResetApiKey'; requesterUserId: number; newKeyHash: string; at: string }
  | { type: 'DeleteApiKey'; requesterUserId: number; at: string };

export const ApiKeyErrors = {
  exists: 'api_key_exists',
  notFound: 'api_key_not_found',
  notOwner: 'not_owner',
} as const;

export const initialState = (): ApiKeyState => ({ status: 'none' });

export function evolve(state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyCreated':
      return {
        status: 'active',
        keyId: event.data.keyId,
        userId: event.data.userId,
        kind: event.data.kind,
        permissions: event.data.permissions,
      };
    case 'ApiKeyDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
    default:
      return state;
  }
}

function activeKeyOf(state: ApiKeyState, requesterUserId: number) {
  if (state.status !== 'active') throw new DomainError(ApiKeyErrors.notFound, 'No such API key');
  if (state.userId !== requesterUserId) {
    throw new DomainError(ApiKeyErrors.notOwner, 'This API key belongs to another account');
  }
  return state;
}

export function decide(command: ApiKeyCommand, state: ApiKeyState): ApiKeyEvent[] {
  switch (command.type) {
    case 'CreateApiKey':
      if (state.status !== 'none') throw new DomainError(ApiKeyErrors.exists, 'This API key id is taken');
      return [
        {
          type: 'ApiKeyCreated',
          data: {
            keyId: command.keyId,
            userId: command.userId,
            name: command.name,
            keyHash: command.keyHash,
            permissions: command.permissions,
            kind: command.kind,
            createdAt: command.at,
            ...(command.expiresAt ? { expiresAt: command.expiresAt } : {}),
          },
        },
      ];
    case 'ResetApiKey': {
      const key = activeKeyOf(state, command.requesterUserId);
      return [
        {
          type: 'ApiKeyReset',
          data: { keyId: key.keyId, keyHash: command.newKeyHash, resetAt: command.at },
        },
      ];
    }
    case 'DeleteApiKey': {
      const key = activeKeyOf(state, command.requesterUserId);
      return [{ type: 'ApiKeyDeleted', data: { keyId: key.keyId, deletedAt: command.at } }];
    }
  }
}

export const apiKeyDecider = { initialState, evolve, decide };
export const apiKeyStreamId = (keyId: number): string => `api_key-${keyId}`;
