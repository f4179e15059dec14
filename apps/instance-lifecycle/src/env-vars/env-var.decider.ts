import { DomainError, type DomainEvent } from '@rigmarket/contracts';

/**
 * An account's environment variables (`env_vars-<userId>`, `vastai create|update|delete env-var`), added to
 * the env of every instance the account rents (docs/instances.md, "Environment variables"). Values are user
 * secrets: the events carry them sealed (AES-256-GCM, EnvVarBox) and are private to instance-lifecycle, so
 * they never reach the outbox, Kafka or another context.
 */
export type EnvVarSet = DomainEvent<
  'EnvVarSet',
  { userId: number; name: string; valueSealed: string; created: boolean; at: string }
>;
export type EnvVarDeleted = DomainEvent<'EnvVarDeleted', { userId: number; name: string; at: string }>;
export type EnvVarEvent = EnvVarSet | EnvVarDeleted;

export interface EnvVarsState {
  names: Set<string>;
}

export type EnvVarCommand = { at: string; userId: number } & (
  | { type: 'CreateEnvVar'; name: string; valueSealed: string }
  | { type: 'UpdateEnvVar'; name: string; valueSealed: string }
  | { type: 'DeleteEnvVar'; name: string }
);

export const EnvVarErrors = { exists: 'env_var_exists', notFound: 'env_var_not_found' } as const;

/** The most variables one account keeps (each at most ENV_VAR_LIMITS.valueBytes). */
export const ENV_VAR_LIMITS = { perAccount: 100, nameLength: 128, valueBytes: 4096 } as const;

export const initialState = (): EnvVarsState => ({ names: new Set() });

/** Updates the set in place (the runner owns the state it folds), so a long history folds in linear time. */
export function evolve(state: EnvVarsState, event: EnvVarEvent): EnvVarsState {
  if (event.type === 'EnvVarSet') state.names.add(event.data.name);
  else state.names.delete(event.data.name);
  return state;
}

export function decide(command: EnvVarCommand, state: EnvVarsState): EnvVarEvent[] {
  const { userId, name, at } = command;
  switch (command.type) {
    case 'CreateEnvVar':
      if (state.names.has(name))
        throw new DomainError(
          EnvVarErrors.exists,
          `Environment variable ${name} already exists; use update env-var to change it`,
        );
      if (state.names.size >= ENV_VAR_LIMITS.perAccount)
        throw new DomainError(
          'bad_request',
          `An account keeps at most ${ENV_VAR_LIMITS.perAccount} environment variables`,
        );
      return [
        { type: 'EnvVarSet', data: { userId, name, valueSealed: command.valueSealed, created: true, at } },
      ];
    case 'UpdateEnvVar':
      if (!state.names.has(name))
        throw new DomainError(EnvVarErrors.notFound, `No environment variable ${name}`);
      return [
        { type: 'EnvVarSet', data: { userId, name, valueSealed: command.valueSealed, created: false, at } },
      ];
    case 'DeleteEnvVar':
      if (!state.names.has(name))
        throw new DomainError(EnvVarErrors.notFound, `No environment variable ${name}`);
      return [{ type: 'EnvVarDeleted', data: { userId, name, at } }];
  }
}

export const envVarsDecider = { initialState, evolve, decide };
export const envVarsStreamId = (userId: number): string => `env_vars-${userId}`;
