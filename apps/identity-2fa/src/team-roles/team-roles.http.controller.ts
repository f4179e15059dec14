import { Body, Controller, Delete, Get, Param, ParseIntPipe, Post, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsDefined, IsString, Length, Matches } from 'class-validator';
import {
  CreateTeamRoleCommand,
  DeleteTeamRoleCommand,
  GetTeamRoleQuery,
  ListTeamRolesQuery,
  UpdateTeamRoleCommand,
  parseRolePermissions,
} from './team-roles.handlers';
import { ANSWERS, BODIES } from '../identity.openapi';

export class TeamRoleRequest {
  @IsString()
  @Length(1, 64)
  @Matches(/^[\w .-]+$/, {
    message: 'name may contain letters, digits, spaces, dots, dashes and underscores',
  })
  name: string;

  @IsDefined({ message: 'permissions is required' })
  permissions: unknown;
}

@Controller('api/v0/team')
@Authenticated()
export class TeamRolesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get('roles-full')
  @RequirePermission('team_read')
  @ApiContract({ ok: ANSWERS.roles })
  async list(@CallOf() { caller: principal }: Call) {
    return { success: true, roles: await this.queries.execute(new ListTeamRolesQuery(principal.userId)) };
  }

  @Get('roles/:name')
  @RequirePermission('team_read')
  @ApiContract({ ok: ANSWERS.role, errors: { 404: ['team_role_not_found'] } })
  async get(@Param('name') name: string, @CallOf() { caller: principal }: Call) {
    const role = await this.queries.execute(new GetTeamRoleQuery(principal.userId, name));
    return { id: role.id, name: role.name, permissions: role.permissions };
  }

  @Post('roles')
  @RequirePermission('team_write')
  @ApiContract({
    status: 201,
    body: BODIES.teamRole,
    ok: ANSWERS.roleSaved,
    errors: { 409: ['team_role_exists'] },
  })
  async create(@Body() body: TeamRoleRequest, @CallOf() { caller: principal, metadata }: Call) {
    const role = await this.commands.execute(
      new CreateTeamRoleCommand(
        principal.userId,
        body.name,
        parseRolePermissions(body.permissions),
        metadata,
      ),
    );
    return { success: true, id: role.id, name: role.name, permissions: role.permissions };
  }

  /** Update takes the numeric id (docs/client-compat.md 2.10); show and delete take the name. */
  @Put('roles/:id')
  @RequirePermission('team_write')
  @ApiContract({
    body: BODIES.teamRole,
    ok: ANSWERS.roleSaved,
    errors: { 403: ['built_in_role'], 404: ['team_role_not_found'], 409: ['team_role_exists'] },
  })
  async update(
    @Param(
      'id',
      new ParseIntPipe({ exceptionFactory: () => ApiError.badRequest('Update a role by its numeric id') }),
    )
    id: number,
    @Body() body: TeamRoleRequest,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const role = await this.commands.execute(
      new UpdateTeamRoleCommand(
        principal.userId,
        id,
        body.name,
        parseRolePermissions(body.permissions),
        metadata,
      ),
    );
    return { success: true, id: role.id, name: role.name, permissions: role.permissions };
  }

  @Delete('roles/:name')
  @RequirePermission('team_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 403: ['built_in_role'], 404: ['team_role_not_found'] } })
  async remove(@Param('name') name: string, @CallOf() { caller: principal, metadata }: Call) {
    await this.commands.execute(new DeleteTeamRoleCommand(principal.userId, name, metadata));
    return { success: true, msg: `Role ${name} deleted` };
  }
}
