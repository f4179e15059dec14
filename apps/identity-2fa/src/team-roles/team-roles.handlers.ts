import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata, isPermissionCategory } from '@rigmarket/contracts';
import { type ContextRuntime, isUniqueViolation } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { SCHEMA } from '../schema';
import { BUILT_IN_ROLES, teamRoleDecider, teamRoleStreamId } from './team-role.decider';

export interface TeamRoleView {
  id: number;
  name: string;
  permissions: string[];
  built_in: boolean;
}

interface TeamRoleRow {
  role_id: number;
  name: string;
  permissions: string[] | string;
  built_in: boolean;
}

const toView = (row: TeamRoleRow): TeamRoleView => ({
  id: Number(row.role_id),
  name: row.name,
  permissions: typeof row.permissions === 'string' ? JSON.parse(row.permissions) : row.permissions,
  built_in: row.built_in,
});

/** Accepts a list of categories, or the CLI's permissions file `{api: {<category>: {}}}`. */
export function parseRolePermissions(raw: unknown): string[] {
  const list = Array.isArray(raw)
    ? raw
    : raw &&
        typeof raw === 'object' &&
        typeof (raw as { api?: unknown }).api === 'object' &&
        (raw as { api?: unknown }).api !== null
      ? Object.keys((raw as { api: object }).api)
      : null;
  if (!list || list.some((p) => typeof p !== 'string')) {
    throw ApiError.badRequest(
      'permissions must be a list of categories or an object {"api": {"<category>": {}}}',
    );
  }
  const unknown = (list as string[]).filter((p) => !isPermissionCategory(p));
  if (unknown.length > 0) throw ApiError.badRequest(`Unknown permission categories: ${unknown.join(', ')}`);
  return [...new Set(list as string[])];
}

function assertNotBuiltInName(name: string): void {
  if (BUILT_IN_ROLES.some((r) => r.name === name)) {
    throw ApiError.conflict(`${name} is a built-in role name`, 'team_role_exists');
  }
}

function duplicateName(error: unknown, name: string): never {
  if (isUniqueViolation(error, 'team_roles_name_unique'))
    throw ApiError.conflict(`A role named ${name} already exists`, 'team_role_exists');
  throw error;
}

export class CreateTeamRoleCommand extends Command<TeamRoleView> {
  constructor(
    readonly ownerId: number,
    readonly name: string,
    readonly permissions: string[],
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateTeamRoleCommand)
export class CreateTeamRoleHandler implements ICommandHandler<CreateTeamRoleCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: CreateTeamRoleCommand): Promise<TeamRoleView> {
    assertNotBuiltInName(command.name);
    const roleId = await this.runtime.nextId('team_role_ids');
    await this.runtime.runner
      .handle(
        teamRoleStreamId(roleId),
        teamRoleDecider,
        (state) =>
          teamRoleDecider.decide(
            {
              type: 'CreateTeamRole',
              roleId,
              name: command.name,
              permissions: command.permissions,
              builtIn: false,
              ownerId: command.ownerId,
            },
            state,
          ),
        command.metadata,
      )
      .catch((error: unknown) => duplicateName(error, command.name));
    return { id: roleId, name: command.name, permissions: command.permissions, built_in: false };
  }
}

export class UpdateTeamRoleCommand extends Command<TeamRoleView> {
  constructor(
    readonly requesterUserId: number,
    readonly roleId: number,
    readonly name: string,
    readonly permissions: string[],
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(UpdateTeamRoleCommand)
export class UpdateTeamRoleHandler implements ICommandHandler<UpdateTeamRoleCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: UpdateTeamRoleCommand): Promise<TeamRoleView> {
    assertNotBuiltInName(command.name);
    await this.runtime.runner
      .handle(
        teamRoleStreamId(command.roleId),
        teamRoleDecider,
        (state) =>
          teamRoleDecider.decide(
            {
              type: 'UpdateTeamRole',
              requesterUserId: command.requesterUserId,
              name: command.name,
              permissions: command.permissions,
            },
            state,
          ),
        command.metadata,
      )
      .catch((error: unknown) => duplicateName(error, command.name));
    return { id: command.roleId, name: command.name, permissions: command.permissions, built_in: false };
  }
}

export class DeleteTeamRoleCommand extends Command<void> {
  constructor(
    readonly requesterUserId: number,
    readonly name: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(DeleteTeamRoleCommand)
export class DeleteTeamRoleHandler implements ICommandHandler<DeleteTeamRoleCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: DeleteTeamRoleCommand): Promise<void> {
    const role = await findRoleByName(this.runtime, command.requesterUserId, command.name);
    await this.runtime.runner.handle(
      teamRoleStreamId(role.id),
      teamRoleDecider,
      (state) =>
        teamRoleDecider.decide({ type: 'DeleteTeamRole', requesterUserId: command.requesterUserId }, state),
      command.metadata,
    );
  }
}

/** Built-in roles, plus the caller's own; never another account's. */
async function findRoleByName(runtime: ContextRuntime, userId: number, name: string): Promise<TeamRoleView> {
  const rows = await runtime.db.query<TeamRoleRow>(
    `SELECT role_id, name, permissions, built_in FROM ${SCHEMA}.team_roles
      WHERE name = $1 AND (built_in OR owner_id = $2) ORDER BY built_in DESC LIMIT 1`,
    [name, userId],
  );
  if (!rows[0]) throw ApiError.notFound(`Team role ${name} not found`, 'team_role_not_found');
  return toView(rows[0]);
}

export class GetTeamRoleQuery extends Query<TeamRoleView> {
  constructor(
    readonly userId: number,
    readonly name: string,
  ) {
    super();
  }
}

@QueryHandler(GetTeamRoleQuery)
export class GetTeamRoleHandler implements IQueryHandler<GetTeamRoleQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}
  execute(query: GetTeamRoleQuery): Promise<TeamRoleView> {
    return findRoleByName(this.runtime, query.userId, query.name);
  }
}

export class ListTeamRolesQuery extends Query<TeamRoleView[]> {
  constructor(readonly userId: number) {
    super();
  }
}

@QueryHandler(ListTeamRolesQuery)
export class ListTeamRolesHandler implements IQueryHandler<ListTeamRolesQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: ListTeamRolesQuery): Promise<TeamRoleView[]> {
    const rows = await this.runtime.db.query<TeamRoleRow>(
      `SELECT role_id, name, permissions, built_in FROM ${SCHEMA}.team_roles WHERE built_in OR owner_id = $1 ORDER BY role_id`,
      [query.userId],
    );
    return rows.map(toView);
  }
}
