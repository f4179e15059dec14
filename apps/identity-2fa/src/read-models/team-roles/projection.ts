import type { TeamRoleCreated, TeamRoleDeleted, TeamRoleUpdated } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import type { TeamRoleOwned } from '../../team-roles/team-role.decider';

export const teamRolesProjection = defineProjection<
  TeamRoleCreated | TeamRoleUpdated | TeamRoleDeleted | TeamRoleOwned
>({
  name: 'team_roles',
  version: 1,
  sources: [{ context: 'identity', streamType: 'team_role' }],
  tables: [`${SCHEMA}.team_roles`],
  eventTypes: ['TeamRoleCreated', 'TeamRoleOwned', 'TeamRoleUpdated', 'TeamRoleDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'TeamRoleCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.team_roles (role_id, name, permissions, built_in) VALUES ($1, $2, $3, $4)`,
          [event.data.roleId, event.data.name, JSON.stringify(event.data.permissions), event.data.builtIn],
        );
        return;
      case 'TeamRoleOwned':
        await sql.execute(`UPDATE ${SCHEMA}.team_roles SET owner_id = $2 WHERE role_id = $1`, [
          event.data.roleId,
          event.data.ownerId,
        ]);
        return;
      case 'TeamRoleUpdated':
        await sql.execute(`UPDATE ${SCHEMA}.team_roles SET name = $2, permissions = $3 WHERE role_id = $1`, [
          event.data.roleId,
          event.data.name,
          JSON.stringify(event.data.permissions),
        ]);
        return;
      case 'TeamRoleDeleted':
        await sql.execute(`DELETE FROM ${SCHEMA}.team_roles WHERE role_id = $1`, [event.data.roleId]);
        return;
    }
  },
});
