import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { teamsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';
const team = (type: string, data: object) => ({ streamId: 'team-50', type, data }) as never;

describe('teams projection', () => {
  const spec = projectionSpec(identityContext, teamsProjection);
  afterAll(() => spec.close());

  const history = [
    team('TeamCreated', { teamId: 50, ownerId: 7, name: 'lab', createdAt: AT }),
    team('TeamMemberJoined', { teamId: 50, userId: 7, role: 'owner', joinedAt: AT }),
    team('TeamKeyIssued', { teamId: 50, userId: 7, keyId: 900 }),
    team('TeamMemberInvited', {
      teamId: 50,
      email: 'Bob@Example.com',
      role: 'member',
      tokenHash: 'ab',
      expiresAt: '2026-05-08T12:00:00.000Z',
      invitedBy: 7,
    }),
    team('TeamMemberInvited', {
      teamId: 50,
      email: 'carol@example.com',
      role: 'billing',
      tokenHash: 'cd',
      expiresAt: '2026-05-08T12:00:00.000Z',
      invitedBy: 7,
    }),
  ];

  it('a joining member uses up the invitation and holds its key', () =>
    spec
      .given(history)
      .when(
        team('TeamMemberJoined', {
          teamId: 50,
          userId: 8,
          role: 'member',
          joinedAt: AT,
          email: 'bob@example.com',
        }),
      )
      .then(
        `SELECT (SELECT json_agg(user_id ORDER BY user_id) FROM identity.team_members) AS members,
                (SELECT json_agg(email ORDER BY email) FROM identity.team_invitations) AS invited,
                (SELECT json_agg(key_id) FROM identity.team_keys) AS keys`,
        [{ members: [7, 8], invited: ['carol@example.com'], keys: [900] }],
      ));

  it('a destroyed team keeps its row, dated, and nothing else', () =>
    spec
      .given(history)
      .when(team('TeamDestroyed', { teamId: 50, destroyedAt: AT }))
      .then(
        `SELECT t.name, t.destroyed_at IS NOT NULL AS destroyed,
                (SELECT count(*)::int FROM identity.team_members) + (SELECT count(*)::int FROM identity.team_keys)
                  + (SELECT count(*)::int FROM identity.team_invitations) AS left_over
           FROM identity.teams t`,
        [{ name: 'lab', destroyed: true, left_over: 0 }],
      ));
});
