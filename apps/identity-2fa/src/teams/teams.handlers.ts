import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  type PermissionsObject,
  isPermissionCategory,
} from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { type Caller, hashKey } from '@rigmarket/http-kit';
import { apiKeyDecider, apiKeyStreamId } from '../api-keys/api-key.decider';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { MAILER, type Mailer } from '../mailer';
import { findUser } from '../read-models/users/queries';
import { SCHEMA } from '../schema';
import { newKeyValue, newVerificationToken } from '../secrets';
import { userDecider, userStreamId } from '../users/user.decider';
import { keysOf, teamDecider, teamStreamId } from './team.decider';

/** How many live teams one account may own, and how long an invitation stays valid. */
export const TEAMS_PER_OWNER = 10;
const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/** The team a call acts on, and the member acting: a team key names both; an owner's own key, its newest team. */
export async function currentTeam(
  runtime: ContextRuntime,
  caller: Caller,
): Promise<{ teamId: number; memberId: number }> {
  const [held] = await runtime.db.query<{ team_id: number; user_id: number }>(
    `SELECT team_id, user_id FROM ${SCHEMA}.team_keys WHERE key_id = $1`,
    [caller.keyId],
  );
  if (held && Number(held.team_id) === caller.userId) {
    return { teamId: Number(held.team_id), memberId: Number(held.user_id) };
  }
  const [owned] = await runtime.db.query<{ team_id: number }>(
    `SELECT team_id FROM ${SCHEMA}.teams WHERE owner_id = $1 AND destroyed_at IS NULL ORDER BY team_id DESC LIMIT 1`,
    [caller.userId],
  );
  if (owned) return { teamId: Number(owned.team_id), memberId: caller.userId };
  throw ApiError.notFound('You have no team: create one with POST /api/v0/team/', 'team_not_found');
}

/** A role's permissions as a key scope: built-in roles, and those of the team's owner or of the team. */
async function roleScope(
  runtime: ContextRuntime,
  role: string,
  ownerIds: readonly number[],
): Promise<PermissionsObject | null> {
  const [row] = await runtime.db.query<{ permissions: string[] | string }>(
    `SELECT permissions FROM ${SCHEMA}.team_roles WHERE name = $1 AND (built_in OR owner_id = ANY($2::int[]))
     ORDER BY built_in DESC LIMIT 1`,
    [role, ownerIds],
  );
  if (!row) return null;
  const names =
    typeof row.permissions === 'string' ? (JSON.parse(row.permissions) as string[]) : row.permissions;
  return { api: Object.fromEntries(names.filter(isPermissionCategory).map((name) => [name, {}])) };
}

/** Creates the team key the team's stream already records (keyId reserved first, so removal always finds it). */
async function issueTeamKey(
  runtime: ContextRuntime,
  team: { teamId: number; name: string; ownerId: number },
  member: { userId: number; role: string; keyId: number },
  metadata: EventMetadata,
): Promise<string> {
  const scope = await roleScope(runtime, member.role, [team.ownerId, team.teamId]);
  if (!scope) throw ApiError.notFound(`No team role named ${member.role}`, 'team_role_not_found');
  const key = newKeyValue();
  await runtime.runner.run(
    apiKeyStreamId(member.keyId),
    apiKeyDecider,
    {
      type: 'CreateApiKey',
      keyId: member.keyId,
      userId: team.teamId,
      name: `team ${team.name}: member ${member.userId} (${member.role})`.slice(0, 200),
      keyHash: hashKey(key),
      permissions: scope,
      kind: 'api',
    },
    metadata,
  );
  return key;
}

/** Deletes team keys; one already gone (or never created after a crash) is skipped. */
async function revokeTeamKeys(
  runtime: ContextRuntime,
  teamId: number,
  keyIds: readonly number[],
  metadata: EventMetadata,
): Promise<void> {
  for (const keyId of keyIds) {
    const { state } = await runtime.runner.load(apiKeyStreamId(keyId), apiKeyDecider);
    if (state.status !== 'active') continue;
    await runtime.runner.run(
      apiKeyStreamId(keyId),
      apiKeyDecider,
      { type: 'DeleteApiKey', requesterUserId: teamId },
      metadata,
    );
  }
}

export interface TeamCreatedAnswer {
  teamId: number;
  name: string;
  apiKey: string;
}

export class CreateTeamCommand extends Command<TeamCreatedAnswer> {
  constructor(
    readonly caller: Caller,
    readonly name: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * POST /api/v0/team/: the team is an account of its own (its id from the user ids; an address under the
 * reserved `.invalid` domain, so no mail ever goes to it), its creator the owner holding a team key.
 */
@CommandHandler(CreateTeamCommand)
export class CreateTeamHandler implements ICommandHandler<CreateTeamCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: CreateTeamCommand): Promise<TeamCreatedAnswer> {
    const ownerId = command.caller.userId;
    const [isTeam] = await this.runtime.db.query(`SELECT 1 FROM ${SCHEMA}.teams WHERE team_id = $1`, [
      ownerId,
    ]);
    if (isTeam) throw ApiError.forbidden('A team cannot create a team: use your personal API key');
    const [owned] = await this.runtime.db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${SCHEMA}.teams WHERE owner_id = $1 AND destroyed_at IS NULL`,
      [ownerId],
    );
    if (Number(owned?.n ?? 0) >= TEAMS_PER_OWNER) {
      throw ApiError.conflict(`An account owns at most ${TEAMS_PER_OWNER} teams`, 'too_many_teams');
    }
    const teamId = await this.runtime.nextId('user_ids');
    const ownerKeyId = await this.runtime.nextId('api_key_ids');
    await this.runtime.runner.run(
      userStreamId(teamId),
      userDecider,
      {
        type: 'RegisterUser',
        userId: teamId,
        email: `team-${teamId}@teams.invalid`,
        username: null,
        fullName: command.name,
        passwordHash: null,
        isAdmin: false,
        preVerified: true,
        verification: null,
      },
      command.metadata,
    );
    await this.runtime.runner.run(
      teamStreamId(teamId),
      teamDecider,
      { type: 'CreateTeam', teamId, ownerId, name: command.name, ownerKeyId },
      command.metadata,
    );
    const apiKey = await issueTeamKey(
      this.runtime,
      { teamId, name: command.name, ownerId },
      { userId: ownerId, role: 'owner', keyId: ownerKeyId },
      command.metadata,
    );
    return { teamId, name: command.name, apiKey };
  }
}

export class InviteMemberCommand extends Command<{ teamId: number; expiresAt: string }> {
  constructor(
    readonly caller: Caller,
    readonly email: string,
    readonly role: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** POST /api/v0/team/invite/?email=&role=: mails a token the invitee answers with POST /api/v0/team/join/. */
@CommandHandler(InviteMemberCommand)
export class InviteMemberHandler implements ICommandHandler<InviteMemberCommand> {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(MAILER) private readonly mailer: Mailer,
  ) {}

  async execute(command: InviteMemberCommand): Promise<{ teamId: number; expiresAt: string }> {
    const { teamId, memberId } = await currentTeam(this.runtime, command.caller);
    const { state } = await this.runtime.runner.load(teamStreamId(teamId), teamDecider);
    if (state.status !== 'active') throw ApiError.notFound('Team not found', 'team_not_found');
    if (!(await roleScope(this.runtime, command.role, [state.ownerId, teamId]))) {
      throw ApiError.notFound(`No team role named ${command.role}`, 'team_role_not_found');
    }
    const invitee = await findUser(this.runtime, 'lower(email) = lower($1)', command.email);
    const token = newVerificationToken();
    const expiresAt = new Date(this.runtime.runner.clock.now().getTime() + INVITATION_TTL_MS).toISOString();
    await this.runtime.runner.run(
      teamStreamId(teamId),
      teamDecider,
      {
        type: 'InviteMember',
        requesterId: memberId,
        email: command.email,
        inviteeId: invitee ? Number(invitee.user_id) : null,
        role: command.role,
        tokenHash: hashKey(token),
        expiresAt,
      },
      command.metadata,
    );
    await this.mailer.send({
      to: command.email,
      subject: `You are invited to the Rigmarket team ${state.name}`,
      text:
        `You are invited to join the team ${state.name} (team id ${teamId}) as ${command.role}.\n` +
        `Your invitation code is ${token}\nWith your own API key, send POST /api/v0/team/join/ ` +
        `{"team_id": ${teamId}, "token": "<the code>"} before ${expiresAt}; the answer holds your team API key.`,
    });
    return { teamId, expiresAt };
  }
}

export class JoinTeamCommand extends Command<{ teamId: number; name: string; role: string; apiKey: string }> {
  constructor(
    readonly userId: number,
    readonly teamId: number,
    readonly token: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** POST /api/v0/team/join/: the invitee (with its own key, the invited address) becomes a member. */
@CommandHandler(JoinTeamCommand)
export class JoinTeamHandler implements ICommandHandler<JoinTeamCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: JoinTeamCommand) {
    const user = await findUser(this.runtime, 'user_id = $1', command.userId);
    if (!user) throw ApiError.notFound('User not found');
    const keyId = await this.runtime.nextId('api_key_ids');
    const { state } = await this.runtime.runner.run(
      teamStreamId(command.teamId),
      teamDecider,
      {
        type: 'JoinTeam',
        userId: command.userId,
        email: user.email,
        tokenHash: hashKey(command.token),
        keyId,
      },
      command.metadata,
    );
    if (state.status === 'none') throw ApiError.notFound('Team not found', 'team_not_found');
    const role = state.members[command.userId]!.role;
    const apiKey = await issueTeamKey(
      this.runtime,
      { teamId: command.teamId, name: state.name, ownerId: state.ownerId },
      { userId: command.userId, role, keyId },
      command.metadata,
    );
    return { teamId: command.teamId, name: state.name, role, apiKey };
  }
}

export class RemoveMemberCommand extends Command<void> {
  constructor(
    readonly caller: Caller,
    readonly userId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** DELETE /api/v0/team/members/{id}/: the member's team keys stop working first, then the member leaves. */
@CommandHandler(RemoveMemberCommand)
export class RemoveMemberHandler implements ICommandHandler<RemoveMemberCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: RemoveMemberCommand): Promise<void> {
    const { teamId, memberId } = await currentTeam(this.runtime, command.caller);
    const { state } = await this.runtime.runner.load(teamStreamId(teamId), teamDecider);
    // The decider's checks first (nothing is revoked for a refused removal)...
    teamDecider.decide(
      { type: 'RemoveMember', requesterId: memberId, userId: command.userId, at: '' },
      state,
    );
    // ...then the keys (a crash here leaves a member without keys, never keys without a member).
    await revokeTeamKeys(this.runtime, teamId, keysOf(state, command.userId), command.metadata);
    await this.runtime.runner.run(
      teamStreamId(teamId),
      teamDecider,
      { type: 'RemoveMember', requesterId: memberId, userId: command.userId },
      command.metadata,
    );
  }
}

export class DestroyTeamCommand extends Command<{ teamId: number }> {
  constructor(
    readonly caller: Caller,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** DELETE /api/v0/team/: the owner ends the team once its credit is moved out; every team key stops working. */
@CommandHandler(DestroyTeamCommand)
export class DestroyTeamHandler implements ICommandHandler<DestroyTeamCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: DestroyTeamCommand): Promise<{ teamId: number }> {
    const { teamId, memberId } = await currentTeam(this.runtime, command.caller);
    const { state } = await this.runtime.runner.load(teamStreamId(teamId), teamDecider);
    teamDecider.decide({ type: 'DestroyTeam', requesterId: memberId, at: '' }, state);
    const account = await findUser(this.runtime, 'user_id = $1', teamId);
    if (Number(account?.credit ?? 0) > 0) {
      throw ApiError.conflict(
        `The team still holds ${Number(account?.credit)} of credit: move it out first (vastai transfer credit, with a team key)`,
        'team_has_credit',
      );
    }
    await revokeTeamKeys(this.runtime, teamId, keysOf(state), command.metadata);
    await this.runtime.runner.run(
      teamStreamId(teamId),
      teamDecider,
      { type: 'DestroyTeam', requesterId: memberId },
      command.metadata,
    );
    return { teamId };
  }
}

export interface TeamMemberView {
  id: number | null;
  email: string;
  username: string | null;
  role: string;
  status: 'member' | 'invited';
  is_owner: boolean;
  joined_at: number | null;
  expires_at: number | null;
}

export class ListMembersQuery extends Query<TeamMemberView[]> {
  constructor(readonly caller: Caller) {
    super();
  }
}

/** GET /api/v0/team/members/: the members (owner first), then the pending invitations. */
@QueryHandler(ListMembersQuery)
export class ListMembersHandler implements IQueryHandler<ListMembersQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(query: ListMembersQuery): Promise<TeamMemberView[]> {
    const { teamId } = await currentTeam(this.runtime, query.caller);
    const epoch = (value: string | Date) => Math.floor(new Date(value).getTime() / 1000);
    const members = await this.runtime.db.query<{
      user_id: number;
      email: string;
      username: string | null;
      role: string;
      joined_at: string | Date;
      is_owner: boolean;
    }>(
      `SELECT m.user_id, u.email, u.username, m.role, m.joined_at, (t.owner_id = m.user_id) AS is_owner
       FROM ${SCHEMA}.team_members m JOIN ${SCHEMA}.users u ON u.user_id = m.user_id
       JOIN ${SCHEMA}.teams t ON t.team_id = m.team_id
       WHERE m.team_id = $1 ORDER BY is_owner DESC, m.joined_at, m.user_id`,
      [teamId],
    );
    const invitations = await this.runtime.db.query<{
      email: string;
      role: string;
      expires_at: string | Date;
    }>(
      `SELECT email, role, expires_at FROM ${SCHEMA}.team_invitations WHERE team_id = $1 AND expires_at > $2
       ORDER BY email`,
      [teamId, this.runtime.runner.clock.now().toISOString()],
    );
    return [
      ...members.map((m) => ({
        id: Number(m.user_id),
        email: m.email,
        username: m.username,
        role: m.role,
        status: 'member' as const,
        is_owner: m.is_owner,
        joined_at: epoch(m.joined_at),
        expires_at: null,
      })),
      ...invitations.map((i) => ({
        id: null,
        email: i.email,
        username: null,
        role: i.role,
        status: 'invited' as const,
        is_owner: false,
        joined_at: null,
        expires_at: epoch(i.expires_at),
      })),
    ];
  }
}
