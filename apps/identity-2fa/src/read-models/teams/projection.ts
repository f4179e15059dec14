import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import type { TeamEvent } from '../../teams/team.events';

export const teamsProjection = defineProjection<TeamEvent>({
  name: 'teams',
  version: 1,
  sources: [{ context: 'identity', streamType: 'team' }],
  tables: [`${SCHEMA}.teams`, `${SCHEMA}.team_members`, `${SCHEMA}.team_keys`, `${SCHEMA}.team_invitations`],
  eventTypes: [
    'TeamCreated',
    'TeamMemberInvited',
    'TeamMemberJoined',
    'TeamKeyIssued',
    'TeamMemberRemoved',
    'TeamDestroyed',
  ],
  async apply(sql, event) {
    switch (event.type) {
      case 'TeamCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.teams (team_id, owner_id, name, created_at) VALUES ($1, $2, $3, $4)`,
          [event.data.teamId, event.data.ownerId, event.data.name, event.data.createdAt],
        );
        return;
      case 'TeamMemberInvited':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.team_invitations (team_id, email, role, invited_by, expires_at)
           VALUES ($1, lower($2), $3, $4, $5)
           ON CONFLICT (team_id, email) DO UPDATE SET role = $3, invited_by = $4, expires_at = $5`,
          [event.data.teamId, event.data.email, event.data.role, event.data.invitedBy, event.data.expiresAt],
        );
        return;
      case 'TeamMemberJoined':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.team_members (team_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
          [event.data.teamId, event.data.userId, event.data.role, event.data.joinedAt],
        );
        if (event.data.email) {
          await sql.execute(
            `DELETE FROM ${SCHEMA}.team_invitations WHERE team_id = $1 AND email = lower($2)`,
            [event.data.teamId, event.data.email],
          );
        }
        return;
      case 'TeamKeyIssued':
        await sql.execute(`INSERT INTO ${SCHEMA}.team_keys (key_id, team_id, user_id) VALUES ($1, $2, $3)`, [
          event.data.keyId,
          event.data.teamId,
          event.data.userId,
        ]);
        return;
      case 'TeamMemberRemoved':
        await sql.execute(`DELETE FROM ${SCHEMA}.team_members WHERE team_id = $1 AND user_id = $2`, [
          event.data.teamId,
          event.data.userId,
        ]);
        await sql.execute(`DELETE FROM ${SCHEMA}.team_keys WHERE team_id = $1 AND user_id = $2`, [
          event.data.teamId,
          event.data.userId,
        ]);
        return;
      case 'TeamDestroyed':
        await sql.execute(`UPDATE ${SCHEMA}.teams SET destroyed_at = $2 WHERE team_id = $1`, [
          event.data.teamId,
          event.data.destroyedAt,
        ]);
        for (const table of ['team_members', 'team_keys', 'team_invitations']) {
          await sql.execute(`DELETE FROM ${SCHEMA}.${table} WHERE team_id = $1`, [event.data.teamId]);
        }
        return;
    }
  },
});
