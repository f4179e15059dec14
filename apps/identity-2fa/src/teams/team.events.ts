import type { DomainEvent } from '@rigmarket/contracts';

/**
 * A team (`vastai create team`): an account of its own (its id is a user id, with its own credit and
 * objects) that its members act as through team API keys carrying their role's permissions. All private to
 * identity: invitations name e-mail addresses, and the keys are identity's own business.
 */
export type TeamCreated = DomainEvent<
  'TeamCreated',
  { teamId: number; ownerId: number; name: string; createdAt: string }
>;
export type TeamMemberInvited = DomainEvent<
  'TeamMemberInvited',
  {
    teamId: number;
    email: string;
    role: string;
    /** sha256 of the token mailed to the invitee; the token itself is never stored. */
    tokenHash: string;
    expiresAt: string;
    invitedBy: number;
  }
>;
export type TeamMemberJoined = DomainEvent<
  'TeamMemberJoined',
  /** `email`: the invitation it answered (absent for the owner, who needs none). */
  { teamId: number; userId: number; role: string; joinedAt: string; email?: string }
>;
/** A team API key issued to a member (recorded before the key exists, so removal always finds it). */
export type TeamKeyIssued = DomainEvent<'TeamKeyIssued', { teamId: number; userId: number; keyId: number }>;
export type TeamMemberRemoved = DomainEvent<
  'TeamMemberRemoved',
  { teamId: number; userId: number; removedBy: number; removedAt: string }
>;
export type TeamDestroyed = DomainEvent<'TeamDestroyed', { teamId: number; destroyedAt: string }>;

export type TeamEvent =
  TeamCreated | TeamMemberInvited | TeamMemberJoined | TeamKeyIssued | TeamMemberRemoved | TeamDestroyed;
