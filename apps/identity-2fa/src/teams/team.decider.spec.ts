import { createHash } from 'node:crypto';
import { deciderSpec } from '@rigmarket/testing';
import { teamDecider } from './team.decider';
import type { TeamEvent } from './team.events';

const spec = deciderSpec(teamDecider);
const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-09T00:00:00.000Z';
const hash = (v: string) => createHash('sha256').update(v).digest('hex');
const created: TeamEvent[] = [
  { type: 'TeamCreated', data: { teamId: 50, ownerId: 7, name: 'lab', createdAt: at } },
  { type: 'TeamMemberJoined', data: { teamId: 50, userId: 7, role: 'owner', joinedAt: at } },
  { type: 'TeamKeyIssued', data: { teamId: 50, userId: 7, keyId: 900 } },
];
const invited: TeamEvent = {
  type: 'TeamMemberInvited',
  data: {
    teamId: 50,
    email: 'Bob@Example.com',
    role: 'member',
    tokenHash: hash('tok'),
    expiresAt: '2026-01-08T00:00:00.000Z',
    invitedBy: 7,
  },
};
const joined: TeamEvent[] = [
  {
    type: 'TeamMemberJoined',
    data: { teamId: 50, userId: 8, role: 'member', joinedAt: at, email: 'bob@example.com' },
  },
  { type: 'TeamKeyIssued', data: { teamId: 50, userId: 8, keyId: 901 } },
];
const invite = {
  type: 'InviteMember' as const,
  requesterId: 7,
  email: 'Bob@Example.com',
  inviteeId: 8,
  role: 'member',
  tokenHash: hash('tok'),
  expiresAt: '2026-01-08T00:00:00.000Z',
  at,
};
const join = {
  type: 'JoinTeam' as const,
  userId: 8,
  email: 'bob@example.com',
  tokenHash: hash('tok'),
  keyId: 901,
  at,
};

describe('Team', () => {
  it('is created with its owner as a member holding a team key', () =>
    spec
      .given([])
      .when({ type: 'CreateTeam', teamId: 50, ownerId: 7, name: 'lab', ownerKeyId: 900, at })
      .then(created));

  it('invites by e-mail with a role', () => spec.given(created).when(invite).then([invited]));

  it('does not invite anyone as a second owner, nor an existing member', () => {
    spec
      .given(created)
      .when({ ...invite, role: 'owner' })
      .thenThrows('owner_role_not_invitable');
    spec
      .given([...created, invited, ...joined])
      .when(invite)
      .thenThrows('already_member');
  });

  it('an outsider cannot invite', () =>
    spec
      .given(created)
      .when({ ...invite, requesterId: 99 })
      .thenThrows('team_not_found'));

  it('joins with the mailed token, once, before it expires', () => {
    spec
      .given([...created, invited])
      .when(join)
      .then(joined);
    spec
      .given([...created, invited])
      .when({ ...join, tokenHash: hash('guess') })
      .thenThrows('invalid_invitation');
    spec
      .given([...created, invited])
      .when({ ...join, email: 'eve@example.com' })
      .thenThrows('invalid_invitation');
    spec
      .given([...created, invited])
      .when({ ...join, at: later })
      .thenThrows('invitation_expired');
    spec
      .given([...created, invited, ...joined])
      .when(join)
      .thenThrows('already_member');
  });

  it('removes a member but never the owner', () => {
    spec
      .given([...created, invited, ...joined])
      .when({ type: 'RemoveMember', requesterId: 7, userId: 8, at })
      .then([{ type: 'TeamMemberRemoved', data: { teamId: 50, userId: 8, removedBy: 7, removedAt: at } }]);
    spec
      .given(created)
      .when({ type: 'RemoveMember', requesterId: 7, userId: 7, at })
      .thenThrows('cannot_remove_owner');
    spec
      .given(created)
      .when({ type: 'RemoveMember', requesterId: 7, userId: 8, at })
      .thenThrows('member_not_found');
  });

  it('is destroyed by its owner only', () => {
    spec
      .given([...created, invited, ...joined])
      .when({ type: 'DestroyTeam', requesterId: 7, at })
      .then([{ type: 'TeamDestroyed', data: { teamId: 50, destroyedAt: at } }]);
    spec
      .given([...created, invited, ...joined])
      .when({ type: 'DestroyTeam', requesterId: 8, at })
      .thenThrows('not_team_owner');
    spec
      .given([...created, { type: 'TeamDestroyed', data: { teamId: 50, destroyedAt: at } }])
      .when(invite)
      .thenThrows('team_not_found');
  });
});
