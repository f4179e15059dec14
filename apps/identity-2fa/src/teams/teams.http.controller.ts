import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { ANSWERS, BODIES } from '../identity.openapi';
import {
  CreateTeamCommand,
  DestroyTeamCommand,
  InviteMemberCommand,
  JoinTeamCommand,
  ListMembersQuery,
  RemoveMemberCommand,
} from './teams.handlers';

export class CreateTeamRequest {
  @IsString()
  @Length(1, 64)
  @Matches(/^[\w .-]+$/, {
    message: 'team_name may contain letters, digits, spaces, dots, dashes and underscores',
  })
  team_name: string;

  @IsOptional()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1_000_000)
  transfer_credit?: number;
}

export class JoinTeamRequest {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  team_id: number;

  @IsString()
  @Length(1, 200)
  token: string;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;
const ROLE = /^[\w .-]{1,64}$/;

/**
 * Teams (`vastai create|destroy team`, `invite member`, `show members`, `remove member`). A team is an
 * account of its own; its members act as it through team API keys with their role's permissions. A call
 * made with a team key acts on that team; one made with an owner's own key, on the owner's newest team.
 */
@Controller('api/v0/team')
@Authenticated()
export class TeamsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @RequirePermission('user_write')
  @ApiContract({
    status: 201,
    body: BODIES.createTeam,
    ok: ANSWERS.teamCreated,
    errors: { 400: ['transfer_credit_not_supported'], 403: ['forbidden'], 409: ['too_many_teams'] },
  })
  async create(@CallOf() { caller, metadata }: Call, @Body() body: CreateTeamRequest) {
    if (body.transfer_credit !== undefined && body.transfer_credit > 0) {
      // Credit lives in the marketplace's ledger; a transfer there is its own command, so it is not mixed
      // into the team's creation (which would leave half a team when the transfer is refused).
      throw new ApiError(
        400,
        'transfer_credit_not_supported',
        'create team does not move credit: create the team, then run `vastai transfer credit <team id> <amount>`',
      );
    }
    const team = await this.commands.execute(new CreateTeamCommand(caller, body.team_name, metadata));
    return {
      success: true,
      team_id: team.teamId,
      team_name: team.name,
      api_key: team.apiKey,
      msg: `Team ${team.name} created (account ${team.teamId}). The api_key acts as the team with the owner role; it is shown once.`,
    };
  }

  @Delete()
  @RequirePermission('team_write')
  @ApiContract({
    ok: ANSWERS.msg,
    errors: { 403: ['not_team_owner'], 404: ['team_not_found'], 409: ['team_has_credit'] },
  })
  async destroy(@CallOf() { caller, metadata }: Call) {
    const { teamId } = await this.commands.execute(new DestroyTeamCommand(caller, metadata));
    return { success: true, msg: `Team ${teamId} destroyed: its members left and its keys stopped working.` };
  }

  /** The CLI sends the address and role in the query, with an empty body. */
  @Post('invite')
  @HttpCode(200)
  @RequirePermission('team_write')
  @ApiContract({
    query: { email: { type: 'string' }, role: { type: 'string' } },
    ok: ANSWERS.invited,
    errors: {
      400: ['bad_request', 'owner_role_not_invitable'],
      404: ['team_not_found', 'team_role_not_found'],
      409: ['already_member', 'team_full'],
    },
  })
  async invite(
    @CallOf() { caller, metadata }: Call,
    @Query('email') email?: string,
    @Query('role') role?: string,
  ) {
    if (typeof email !== 'string' || email.length > 254 || !EMAIL.test(email)) {
      throw ApiError.badRequest('email must be an e-mail address (query parameter email)');
    }
    if (typeof role !== 'string' || !ROLE.test(role)) {
      throw ApiError.badRequest('role must name a team role (query parameter role)');
    }
    const { teamId, expiresAt } = await this.commands.execute(
      new InviteMemberCommand(caller, email, role, metadata),
    );
    return {
      success: true,
      team_id: teamId,
      expires_at: Math.floor(new Date(expiresAt).getTime() / 1000),
      msg: `Invitation sent to ${email}`,
    };
  }

  @Post('join')
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.joinTeam,
    ok: ANSWERS.teamJoined,
    errors: {
      400: ['invalid_invitation', 'invitation_expired'],
      404: ['team_not_found'],
      409: ['already_member'],
    },
  })
  async join(@CallOf() { caller, metadata }: Call, @Body() body: JoinTeamRequest) {
    const joined = await this.commands.execute(
      new JoinTeamCommand(caller.userId, body.team_id, body.token, metadata),
    );
    return {
      success: true,
      team_id: joined.teamId,
      team_name: joined.name,
      role: joined.role,
      api_key: joined.apiKey,
      msg: `You joined ${joined.name} as ${joined.role}. The api_key acts as the team; it is shown once.`,
    };
  }

  /** A bare list, as the CLI prints it: members (owner first), then pending invitations (`id` null). */
  @Get('members')
  @RequirePermission('team_read')
  @ApiContract({ ok: ANSWERS.members, errors: { 404: ['team_not_found'] } })
  members(@CallOf() { caller }: Call) {
    return this.queries.execute(new ListMembersQuery(caller));
  }

  @Delete('members/:id')
  @RequirePermission('team_write')
  @ApiContract({
    ok: ANSWERS.msg,
    errors: { 400: ['cannot_remove_owner'], 404: ['team_not_found', 'member_not_found'] },
  })
  async remove(@CallOf() { caller, metadata }: Call, @Param('id', ParseIntPipe) id: number) {
    await this.commands.execute(new RemoveMemberCommand(caller, id, metadata));
    return { success: true, msg: `Member ${id} removed: their team keys no longer work.` };
  }
}
