import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { teamRolesProjection } from './projection';

describe('team_roles projection', () => {
  const spec = projectionSpec(identityContext, teamRolesProjection);
  afterAll(() => spec.close());

  it('keeps built-in and owned roles, follows renames and drops deleted ones', () =>
    spec
      .given([
        {
          streamId: 'team_role-1',
          type: 'TeamRoleCreated',
          data: { roleId: 1, name: 'owner', permissions: ['*'], builtIn: true },
        },
        {
          streamId: 'team_role-100',
          type: 'TeamRoleCreated',
          data: { roleId: 100, name: 'ops', permissions: ['machine_read'], builtIn: false },
        },
        { streamId: 'team_role-100', type: 'TeamRoleOwned', data: { roleId: 100, ownerId: 2 } },
        {
          streamId: 'team_role-101',
          type: 'TeamRoleCreated',
          data: { roleId: 101, name: 'tmp', permissions: [], builtIn: false },
        },
        { streamId: 'team_role-101', type: 'TeamRoleDeleted', data: { roleId: 101, name: 'tmp' } },
      ])
      .when({
        streamId: 'team_role-100',
        type: 'TeamRoleUpdated',
        data: { roleId: 100, name: 'operators', permissions: ['machine_read', 'machine_write'] },
      })
      .then(`SELECT role_id, name, permissions, built_in, owner_id FROM identity.team_roles ORDER BY 1`, [
        { role_id: 1, name: 'owner', permissions: ['*'], built_in: true, owner_id: null },
        {
          role_id: 100,
          name: 'operators',
          permissions: ['machine_read', 'machine_write'],
          built_in: false,
          owner_id: 2,
        },
      ]));
});
