import {
  DomainError,
  PERMISSION_CATEGORIES,
  type TeamRoleCreated,
  type TeamRoleDeleted,
  type TeamRoleUpdated,
} from '@rigmarket/contracts';
import type { DomainEvent } from '@rigmarket/contracts';

/** Private: who owns a custom role (built-in roles have no owner). */
export type TeamRoleOwned = DomainEvent<'TeamRoleOwned', { roleId: number; ownerId: number }>;
export type TeamRoleEvent = TeamRoleCreated | TeamRoleUpdated | TeamRoleDeleted | TeamRoleOwned;

export type TeamRoleState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; roleId: number; name: string; builtIn: boolean; ownerId: number | null };

export type TeamRoleCommand =
  | {
      type: 'CreateTeamRole';
      roleId: number;
      name: string;
      permissions: string[];
      builtIn: boolean;
      ownerId: number | null;
    }
  | { type: 'UpdateTeamRole'; requesterUserId: number; name: string; permissions: string[] }
  | { type: 'DeleteTeamRole'; requesterUserId: number };

export const TeamRoleErrors = {
  exists: 'team_role_exists',
  notFound: 'team_role_not_found',
  builtIn: 'built_in_role',
} as const;

export const initialState = (): TeamRoleState => ({ status: 'none' });

export function evolve(state: TeamRoleState, event: TeamRoleEvent): TeamRoleState {
  switch (event.type) {
    case 'TeamRoleCreated':
      return {
        status: 'active',
        roleId: event.data.roleId,
        name: event.data.name,
        builtIn: event.data.builtIn,
        ownerId: null,
      };
    case 'TeamRoleOwned':
      return state.status === 'none' ? state : { ...state, ownerId: event.data.ownerId };
    case 'TeamRoleUpdated':
      return state.status === 'none' ? state : { ...state, name: event.data.name };
    case 'TeamRoleDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
  }
}

function ownedActiveRole(state: TeamRoleState, requesterUserId: number) {
  // Another account's role is reported as missing: one user never sees another's objects.
  if (state.status !== 'active' || (!state.builtIn && state.ownerId !== requesterUserId)) {
    throw new DomainError(TeamRoleErrors.notFound, 'Team role not found');
  }
  if (state.builtIn)
    throw new DomainError(TeamRoleErrors.builtIn, `The built-in role ${state.name} cannot be changed`);
  return state;
}

export function decide(command: TeamRoleCommand, state: TeamRoleState): TeamRoleEvent[] {
  switch (command.type) {
    case 'CreateTeamRole': {
      if (state.status !== 'none') {
        if (command.builtIn) return []; // seeding again is a no-op
        throw new DomainError(TeamRoleErrors.exists, 'This role id is taken');
      }
      const events: TeamRoleEvent[] = [
        {
          type: 'TeamRoleCreated',
          data: {
            roleId: command.roleId,
            name: command.name,
            permissions: command.permissions,
            builtIn: command.builtIn,
          },
        },
      ];
      if (command.ownerId !== null)
        events.push({ type: 'TeamRoleOwned', data: { roleId: command.roleId, ownerId: command.ownerId } });
      return events;
    }
    case 'UpdateTeamRole': {
      const role = ownedActiveRole(state, command.requesterUserId);
      return [
        {
          type: 'TeamRoleUpdated',
          data: { roleId: role.roleId, name: command.name, permissions: command.permissions },
        },
      ];
    }
    case 'DeleteTeamRole': {
      const role = ownedActiveRole(state, command.requesterUserId);
      return [{ type: 'TeamRoleDeleted', data: { roleId: role.roleId, name: role.name } }];
    }
  }
}

export const teamRoleDecider = { initialState, evolve, decide };
export const teamRoleStreamId = (roleId: number): string => `team_role-${roleId}`;

/** Seeded on an empty store with fixed ids 1-4 (custom roles start at 100). */
export const BUILT_IN_ROLES: ReadonlyArray<{ roleId: number; name: string; permissions: string[] }> = [
  {
    roleId: 1,
    name: 'owner',
    permissions: [...PERMISSION_CATEGORIES],
  },
  {
    roleId: 2,
    name: 'manager',
    permissions: [
      'misc',
      'user_read',
      'instance_read',
      'instance_write',
      'billing_read',
      'machine_read',
      'machine_write',
      'team_read',
      'team_write',
    ],
  },
  {
    roleId: 3,
    name: 'member',
    permissions: ['misc', 'user_read', 'instance_read', 'instance_write', 'team_read'],
  },
  {
    roleId: 4,
    name: 'billing',
    permissions: ['misc', 'user_read', 'billing_read', 'billing_write', 'team_read'],
  },
];
