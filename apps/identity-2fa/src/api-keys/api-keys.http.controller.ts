import { Body, Controller, Delete, Get, Inject, Param, ParseIntPipe, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  AS_OF_ANSWER,
  AS_OF_QUERY,
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  RequirePermission,
  asOfAnswer,
  asOfMillis,
} from '@rigmarket/http-kit';
import { IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import {
  CreateApiKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeyQuery,
  ListApiKeysQuery,
  ResetApiKeyCommand,
  parsePermissions,
} from './api-keys.handlers';
import { ANSWERS, BODIES } from '../identity.openapi';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { apiKeyAsOf } from './api-key-history';

export class CreateApiKeyRequest {
  @IsOptional()
  @IsString()
  @MaxLength(100)
  name?: string;

  @IsOptional()
  @IsObject()
  permissions?: Record<string, unknown>;

  /** Sent by the real CLI as a string; kept for compatibility, not interpreted. */
  @IsOptional()
  key_params?: unknown;
}

export const keyIdPipe = new ParseIntPipe({
  exceptionFactory: () => ApiError.badRequest('The API key id must be an integer'),
});

@Controller('api/v0')
@Authenticated()
export class ApiKeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
  ) {}

  @Post('auth/apikeys')
  @RequirePermission('user_write')
  @ApiContract({ status: 201, body: BODIES.createApiKey, ok: ANSWERS.apiKeyCreated })
  async create(@Body() body: CreateApiKeyRequest, @CallOf() { caller: principal, metadata }: Call) {
    const permissions = parsePermissions(body.permissions);
    const created = await this.commands.execute(
      new CreateApiKeyCommand(principal, body.name ?? null, permissions, metadata),
    );
    return { success: true, id: created.id, key: created.key, permissions: created.permissions ?? false };
  }

  @Get('auth/apikeys')
  @RequirePermission('user_read')
  @ApiContract({ ok: ANSWERS.apiKeys })
  async list(@CallOf() { caller: principal }: Call) {
    return { success: true, apikeys: await this.queries.execute(new ListApiKeysQuery(principal.userId)) };
  }

  @Get('auth/apikeys/:id')
  @RequirePermission('user_read')
  @ApiContract({
    ok: { anyOf: [ANSWERS.apiKey, AS_OF_ANSWER] },
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_args'], 404: ['api_key_not_found'] },
  })
  async get(
    @Param('id', keyIdPipe) id: number,
    @CallOf() { caller: principal }: Call,
    @Query('as_of') asOf?: string,
  ) {
    const asOfMs = asOfMillis(asOf);
    if (asOfMs !== undefined) {
      const found = await apiKeyAsOf(this.runtime, principal.userId, id, asOfMs);
      if (!found || found.events.length === 0)
        throw ApiError.notFound('No such API key then', 'api_key_not_found');
      return asOfAnswer(asOfMs, found.events, found.state);
    }
    return { success: true, apikey: await this.queries.execute(new GetApiKeyQuery(principal.userId, id)) };
  }

  @Delete('auth/apikeys/:id')
  @RequirePermission('user_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 404: ['api_key_not_found'] } })
  async remove(@Param('id', keyIdPipe) id: number, @CallOf() { caller: principal, metadata }: Call) {
    await this.commands.execute(new DeleteApiKeyCommand(principal.userId, id, metadata));
    return { success: true, msg: 'Successfully Deleted API Key' };
  }

  @Put('commands/reset_apikey')
  @RequirePermission('user_write')
  @ApiContract({ ok: ANSWERS.keyReset })
  async reset(@CallOf() { caller: principal, metadata }: Call) {
    const { newKey } = await this.commands.execute(new ResetApiKeyCommand(principal, metadata));
    return { success: true, new_api_key: newKey };
  }
}
