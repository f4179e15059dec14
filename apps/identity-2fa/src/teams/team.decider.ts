import { DomainError } from '@rigmarket/contracts';
import { sameHash } from '../tfa/verification.decider';
import type { TeamEvent } from './team.events';

interface Member {
  role: string;
  keyIds: number[];
}

export type TeamState =
  | { status: 'none' }
  | {
      status: 'active' | 'destroyed';
      teamId: number;
      ownerId: number;
      name: string;
      members: Record<number, Member>;
      /** Pending invitations by lower-cased e-mail address. */
      invitations: Record<string, { role: string; tokenHash: string; expiresAt: string }>;
    };

export type TeamCommand = { at: string } & (
  | { type: 'CreateTeam'; teamId: number; ownerId: number; name: string; ownerKeyId: number }
  | {
      type: 'InviteMember';
      requesterId: number;
      email: string;
      /** The invitee's account when one has this address (a member cannot be invited again). */
      inviteeId: number | null;
      role: string;
      tokenHash: string;
      expiresAt: string;
    }
  | { type: 'JoinTeam'; userId: number; email: string; tokenHash: string; keyId: number }
  | { type: 'RemoveMember'; requesterId: number; userId: number }
  | { type: 'DestroyTeam'; requesterId: number }
);

export const TeamErrors = {
  exists: 'team_exists',
  notFound: 'team_not_found',
  notOwner: 'not_team_owner',
  alreadyMember: 'already_member',
  invitationInvalid: 'invalid_invitation',
  invitationExpired: 'invitation_expired',
  memberNotFound: 'member_not_found',
  ownerStays: 'cannot_remove_owner',
  ownerRole: 'owner_role_not_invitable',
  full: 'team_full',
} as const;

/** Bounds: a team's members and pending invitations. */
export const TEAM_LIMITS = { members: 200, invitations: 50 } as const;

export const initialState = (): TeamState => ({ status: 'none' });

export function evolve(state: TeamState, event: TeamEvent): TeamState {
  if (event.type === 'TeamCreated') {
    return {
      status: 'active',
      teamId: event.data.teamId,
      ownerId: event.data.ownerId,
      name: event.data.name,
      members: {},
      invitations: {},
    };
  }
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'TeamMemberInvited':
      return {
        ...state,
        invitations: {
          ...state.invitations,
          [event.data.email.toLowerCase()]: {
            role: event.data.role,
            tokenHash: event.data.tokenHash,
            expiresAt: event.data.expiresAt,
          },
        },
      };
    case 'TeamMemberJoined': {
      // The invitation it answered is used up.
      const invitations = { ...state.invitations };
      if (event.data.email) delete invitations[event.data.email.toLowerCase()];
      return {
        ...state,
        members: { ...state.members, [event.data.userId]: { role: event.data.role, keyIds: [] } },
        invitations,
      };
    }
    case 'TeamKeyIssued': {
      const member = state.members[event.data.userId];
      if (!member) return state;
      return {
        ...state,
        members: {
          ...state.members,
          [event.data.userId]: { ...member, keyIds: [...member.keyIds, event.data.keyId] },
        },
      };
    }
    case 'TeamMemberRemoved': {
      const members = { ...state.members };
      delete members[event.data.userId];
      return { ...state, members };
    }
    case 'TeamDestroyed':
      return { ...state, status: 'destroyed', members: {}, invitations: {} };
  }
}

function activeTeam(state: TeamState) {
  if (state.status !== 'active') throw new DomainError(TeamErrors.notFound, 'Team not found');
  return state;
}

/** The keys a member holds in the team: revoked when the member leaves or the team ends. */
export function keysOf(state: TeamState, userId?: number): number[] {
  if (state.status === 'none') return [];
  const members = userId === undefined ? Object.values(state.members) : [state.members[userId]];
  return members.flatMap((member) => member?.keyIds ?? []);
}

export function decide(command: TeamCommand, state: TeamState): TeamEvent[] {
  switch (command.type) {
    case 'CreateTeam': {
      if (state.status !== 'none') throw new DomainError(TeamErrors.exists, 'This team id is taken');
      const { teamId, ownerId } = command;
      return [
        { type: 'TeamCreated', data: { teamId, ownerId, name: command.name, createdAt: command.at } },
        { type: 'TeamMemberJoined', data: { teamId, userId: ownerId, role: 'owner', joinedAt: command.at } },
        { type: 'TeamKeyIssued', data: { teamId, userId: ownerId, keyId: command.ownerKeyId } },
      ];
    }
    case 'InviteMember': {
      const team = activeTeam(state);
      if (!team.members[command.requesterId]) throw new DomainError(TeamErrors.notFound, 'Team not found');
      if (command.role === 'owner') {
        throw new DomainError(TeamErrors.ownerRole, 'A team has one owner: invite with another role');
      }
      if (command.inviteeId !== null && team.members[command.inviteeId]) {
        throw new DomainError(TeamErrors.alreadyMember, 'This account is already a member of the team');
      }
      const pending = Object.entries(team.invitations).filter(
        ([email, invitation]) => email !== command.email.toLowerCase() && invitation.expiresAt > command.at,
      );
      if (
        pending.length >= TEAM_LIMITS.invitations ||
        Object.keys(team.members).length >= TEAM_LIMITS.members
      ) {
        throw new DomainError(
          TeamErrors.full,
          `A team holds at most ${TEAM_LIMITS.members} members and ${TEAM_LIMITS.invitations} pending invitations`,
        );
      }
      return [
        {
          type: 'TeamMemberInvited',
          data: {
            teamId: team.teamId,
            email: command.email,
            role: command.role,
            tokenHash: command.tokenHash,
            expiresAt: command.expiresAt,
            invitedBy: command.requesterId,
          },
        },
      ];
    }
    case 'JoinTeam': {
      const team = activeTeam(state);
      if (team.members[command.userId]) {
        throw new DomainError(TeamErrors.alreadyMember, 'You are already a member of this team');
      }
      const invitation = team.invitations[command.email.toLowerCase()];
      if (!invitation || !sameHash(invitation.tokenHash, command.tokenHash)) {
        throw new DomainError(
          TeamErrors.invitationInvalid,
          'No invitation to this team matches this account and token',
        );
      }
      if (invitation.expiresAt <= command.at) {
        throw new DomainError(TeamErrors.invitationExpired, 'This invitation has expired: ask for a new one');
      }
      return [
        {
          type: 'TeamMemberJoined',
          data: {
            teamId: team.teamId,
            userId: command.userId,
            role: invitation.role,
            joinedAt: command.at,
            email: command.email.toLowerCase(),
          },
        },
        {
          type: 'TeamKeyIssued',
          data: { teamId: team.teamId, userId: command.userId, keyId: command.keyId },
        },
      ];
    }
    case 'RemoveMember': {
      const team = activeTeam(state);
      if (!team.members[command.requesterId]) throw new DomainError(TeamErrors.notFound, 'Team not found');
      if (command.userId === team.ownerId) {
        throw new DomainError(TeamErrors.ownerStays, 'The owner cannot be removed: destroy the team instead');
      }
      if (!team.members[command.userId]) {
        throw new DomainError(TeamErrors.memberNotFound, 'No such member in this team');
      }
      return [
        {
          type: 'TeamMemberRemoved',
          data: {
            teamId: team.teamId,
            userId: command.userId,
            removedBy: command.requesterId,
            removedAt: command.at,
          },
        },
      ];
    }
    case 'DestroyTeam': {
      const team = activeTeam(state);
      if (command.requesterId !== team.ownerId) {
        throw new DomainError(TeamErrors.notOwner, 'Only the team owner can destroy the team');
      }
      return [{ type: 'TeamDestroyed', data: { teamId: team.teamId, destroyedAt: command.at } }];
    }
  }
}

export const teamDecider = { initialState, evolve, decide };
export const teamStreamId = (teamId: number): string => `team-${teamId}`;
