import {
  type CloudConnectionListed,
  type CloudConnectionRemoved,
  DomainError,
  type DomainEvent,
} from '@rigmarket/contracts';

/**
 * An account's cloud connections (`cloud_connections-<userId>`): S3-compatible endpoints that `vastai cloud
 * copy` moves files to and from (docs/instances.md, "Cloud connections and cloud copies"). They live in
 * instance-lifecycle because the host agent that runs the copy needs the credentials, and only this context
 * talks to the agents. The credentials are sealed (AES-256-GCM) in CloudConnectionAdded, which is private to
 * this context: it never reaches the outbox, Kafka or another context. Its public companion
 * CloudConnectionListed (and CloudConnectionRemoved) name only the account and the id, for sync-maintenance's
 * check of a cloud copy's connection. Only the last four characters of the access key id are kept in the
 * clear, to show the connection back masked.
 */
export type CloudType = 's3';

export interface CloudConnectionData {
  userId: number;
  connectionId: number;
  name: string;
  cloudType: CloudType;
  endpoint: string;
  region: string;
  accessKeyHint: string;
  /** JSON {accessKeyId, secretAccessKey}, sealed for this account and connection id. */
  credentialsSealed: string;
  at: string;
}

export type CloudConnectionAdded = DomainEvent<'CloudConnectionAdded', CloudConnectionData>;
export type CloudConnectionEvent = CloudConnectionAdded | CloudConnectionListed | CloudConnectionRemoved;

export interface CloudConnectionsState {
  /** connection id -> name, of the connections that exist. */
  names: Map<number, string>;
}

export type CloudConnectionCommand = { at: string; userId: number } & (
  | ({ type: 'AddCloudConnection' } & Omit<CloudConnectionData, 'userId' | 'at'>)
  | { type: 'RemoveCloudConnection'; connectionId: number }
);

export const CloudConnectionErrors = {
  exists: 'cloud_connection_exists',
  notFound: 'no_such_cloud_connection',
} as const;

export const CLOUD_CONNECTION_LIMITS = { perAccount: 20, nameLength: 64, fieldLength: 512 } as const;

export const initialState = (): CloudConnectionsState => ({ names: new Map() });

/** Updates the map in place (the runner owns the state it folds). */
export function evolve(state: CloudConnectionsState, event: CloudConnectionEvent): CloudConnectionsState {
  if (event.type === 'CloudConnectionAdded') state.names.set(event.data.connectionId, event.data.name);
  else if (event.type === 'CloudConnectionRemoved') state.names.delete(event.data.connectionId);
  return state;
}

export function decide(
  command: CloudConnectionCommand,
  state: CloudConnectionsState,
): CloudConnectionEvent[] {
  const { userId, at } = command;
  switch (command.type) {
    case 'AddCloudConnection': {
      const { type: _type, at: _at, userId: _user, ...data } = command;
      if ([...state.names.values()].includes(data.name))
        throw new DomainError(
          CloudConnectionErrors.exists,
          `A cloud connection named ${data.name} already exists; delete it first`,
        );
      if (state.names.size >= CLOUD_CONNECTION_LIMITS.perAccount)
        throw new DomainError(
          'bad_request',
          `An account keeps at most ${CLOUD_CONNECTION_LIMITS.perAccount} cloud connections`,
        );
      return [
        { type: 'CloudConnectionAdded', data: { ...data, userId, at } },
        { type: 'CloudConnectionListed', data: { userId, connectionId: data.connectionId, at } },
      ];
    }
    case 'RemoveCloudConnection':
      if (!state.names.has(command.connectionId))
        throw new DomainError(CloudConnectionErrors.notFound, `No cloud connection ${command.connectionId}`);
      return [{ type: 'CloudConnectionRemoved', data: { userId, connectionId: command.connectionId, at } }];
  }
}

export const cloudConnectionsDecider = { initialState, evolve, decide };
export const cloudConnectionsStreamId = (userId: number): string => `cloud_connections-${userId}`;
