import { deciderSpec } from '@rigmarket/testing';
import { type TeamRoleEvent, teamRoleDecider } from './team-role.decider';

const spec = deciderSpec(teamRoleDecider);
const created: TeamRoleEvent = {
  type: 'TeamRoleCreated',
  data: { roleId: 100, name: 'ops', permissions: ['misc'], builtIn: false },
};
const owned: TeamRoleEvent = { type: 'TeamRoleOwned', data: { roleId: 100, ownerId: 3 } };
const builtIn: TeamRoleEvent = {
  type: 'TeamRoleCreated',
  data: { roleId: 1, name: 'owner', permissions: ['misc'], builtIn: true },
};

describe('Team role', () => {
  it('is created with its owner', () =>
    spec
      .given([])
      .when({
        type: 'CreateTeamRole',
        roleId: 100,
        name: 'ops',
        permissions: ['misc'],
        builtIn: false,
        ownerId: 3,
      })
      .then([created, owned]));

  it('seeding a built-in role again is a no-op', () =>
    spec
      .given([builtIn])
      .when({
        type: 'CreateTeamRole',
        roleId: 1,
        name: 'owner',
        permissions: ['misc'],
        builtIn: true,
        ownerId: null,
      })
      .thenNothingHappened());

  it('is updated by its owner', () =>
    spec
      .given([created, owned])
      .when({ type: 'UpdateTeamRole', requesterUserId: 3, name: 'ops2', permissions: ['user_read'] })
      .then([{ type: 'TeamRoleUpdated', data: { roleId: 100, name: 'ops2', permissions: ['user_read'] } }]));

  it('is invisible to another account', () =>
    spec
      .given([created, owned])
      .when({ type: 'DeleteTeamRole', requesterUserId: 4 })
      .thenThrows('team_role_not_found'));

  it('built-in roles cannot be changed', () =>
    spec.given([builtIn]).when({ type: 'DeleteTeamRole', requesterUserId: 3 }).thenThrows('built_in_role'));

  it('is deleted once', () => {
    spec
      .given([created, owned])
      .when({ type: 'DeleteTeamRole', requesterUserId: 3 })
      .then([{ type: 'TeamRoleDeleted', data: { roleId: 100, name: 'ops' } }]);
    spec
      .given([created, owned, { type: 'TeamRoleDeleted', data: { roleId: 100, name: 'ops' } }])
      .when({ type: 'DeleteTeamRole', requesterUserId: 3 })
      .thenThrows('team_role_not_found');
  });
});
