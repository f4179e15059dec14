import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  type KeyScope,
  type PermissionsObject,
  grantedCategories,
  isPermissionCategory,
  scopeAllows,
} from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { type AuthenticatedKey, hashKey, QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { SCHEMA } from '../schema';
import { newKeyValue } from '../secrets';
import { apiKeyDecider, apiKeyStreamId } from './api-key.decider';

export interface ApiKeyView {
  id: number;
  user_id: number;
  name: string | null;
  key_type: string;
  rights: KeyScope;
  permissions: KeyScope;
  team_id: null;
  team_name: null;
  created_at: number;
  reset_at: number | null;
  /** Sessions: when the key stops authenticating (epoch seconds); null for API keys. */
  expires_at: number | null;
}

interface ApiKeyRow {
  key_id: number;
  user_id: number;
  name: string | null;
  permissions: KeyScope | string;
  kind: string;
  created_at: string | Date;
  reset_at: string | Date | null;
  expires_at?: string | Date | null;
}

function toView(row: ApiKeyRow): ApiKeyView {
  const permissions = (
    typeof row.permissions === 'string' ? JSON.parse(row.permissions) : row.permissions
  ) as KeyScope;
  return {
    id: Number(row.key_id),
    user_id: Number(row.user_id),
    name: row.name,
    key_type: row.kind,
    rights: permissions,
    permissions,
    team_id: null,
    team_name: null,
    created_at: new Date(row.created_at).getTime() / 1000,
    reset_at: row.reset_at ? new Date(row.reset_at).getTime() / 1000 : null,
    expires_at: row.expires_at ? new Date(row.expires_at).getTime() / 1000 : null,
  };
}

/** Validates `{api: {<category>: {}}}`; null or absent means full access. */
export function parsePermissions(raw: unknown): KeyScope {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw ApiError.badRequest('permissions must be an object of the form {"api": {"<category>": {}}}');
  }
  const api = (raw as { api?: unknown }).api;
  if (typeof api !== 'object' || api === null || Array.isArray(api)) {
    throw ApiError.badRequest('permissions must contain an "api" object, e.g. {"api": {"user_read": {}}}');
  }
  const unknown = Object.keys(api).filter((c) => !isPermissionCategory(c));
  if (unknown.length > 0) throw ApiError.badRequest(`Unknown permission categories: ${unknown.join(', ')}`);
  return { api: api as PermissionsObject['api'] };
}

export class CreateApiKeyCommand extends Command<{ id: number; key: string; permissions: KeyScope }> {
  constructor(
    readonly creator: AuthenticatedKey,
    readonly name: string | null,
    readonly permissions: KeyScope,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: CreateApiKeyCommand) {
    // A scoped key may hand out at most what it holds itself.
    const wanted = grantedCategories(command.permissions);
    const beyond = wanted.filter((c) => !scopeAllows(command.creator.scope, c));
    if (beyond.length > 0) {
      throw ApiError.forbidden(`A key cannot grant permissions it does not hold: ${beyond.join(', ')}`);
    }
    await enforceQuota(
      this.runtime.db,
      QUOTAS.apiKeys,
      `SELECT count(*) AS n FROM ${this.runtime.schema}.api_keys
        WHERE user_id = $1 AND kind = 'api' AND deleted_at IS NULL`,
      [command.creator.userId],
    );
    const keyId = await this.runtime.nextId('api_key_ids');
    const key = newKeyValue();
    await this.runtime.runner.run(
      apiKeyStreamId(keyId),
      apiKeyDecider,
      {
        type: 'CreateApiKey',
        keyId,
        userId: command.creator.userId,
        name: command.name,
        keyHash: hashKey(key),
        permissions: command.permissions,
        kind: 'api',
      },
      command.metadata,
    );
    return { id: keyId, key, permissions: command.permissions };
  }
}

export class DeleteApiKeyCommand extends Command<void> {
  constructor(
    readonly requesterUserId: number,
    readonly keyId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(DeleteApiKeyCommand)
export class DeleteApiKeyHandler implements ICommandHandler<DeleteApiKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: DeleteApiKeyCommand): Promise<void> {
    await this.runtime.runner.run(
      apiKeyStreamId(command.keyId),
      apiKeyDecider,
      { type: 'DeleteApiKey', requesterUserId: command.requesterUserId },
      command.metadata,
    );
  }
}

export class ResetApiKeyCommand extends Command<{ newKey: string }> {
  constructor(
    readonly key: AuthenticatedKey,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** Replaces the value of the key the caller used; the old value stops working at once. */
@CommandHandler(ResetApiKeyCommand)
export class ResetApiKeyHandler implements ICommandHandler<ResetApiKeyCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: ResetApiKeyCommand): Promise<{ newKey: string }> {
    const newKey = newKeyValue();
    await this.runtime.runner.run(
      apiKeyStreamId(command.key.keyId),
      apiKeyDecider,
      {
        type: 'ResetApiKey',
        requesterUserId: command.key.userId,
        newKeyHash: hashKey(newKey),
      },
      command.metadata,
    );
    return { newKey };
  }
}

export class ListApiKeysQuery extends Query<ApiKeyView[]> {
  constructor(readonly userId: number) {
    super();
  }
}

@QueryHandler(ListApiKeysQuery)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeysQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(query: ListApiKeysQuery): Promise<ApiKeyView[]> {
    const rows = await this.runtime.db.query<ApiKeyRow>(
      // API keys and the live sessions of password logins (key_type "session"); instance keys are not listed.
      `SELECT * FROM ${SCHEMA}.api_keys WHERE user_id = $1 AND deleted_at IS NULL
         AND (kind = 'api' OR (kind = 'session' AND (expires_at IS NULL OR expires_at > $2))) ORDER BY key_id`,
      [query.userId, this.runtime.runner.clock.now().toISOString()],
    );
    return rows.map(toView);
  }
}

export class GetApiKeyQuery extends Query<ApiKeyView> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
  ) {
    super();
  }
}

@QueryHandler(GetApiKeyQuery)
export class GetApiKeyHandler implements IQueryHandler<GetApiKeyQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(query: GetApiKeyQuery): Promise<ApiKeyView> {
    const rows = await this.runtime.db.query<ApiKeyRow>(
      `SELECT * FROM ${SCHEMA}.api_keys WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL`,
      [query.keyId, query.userId],
    );
    if (!rows[0]) throw ApiError.notFound('No such API key', 'api_key_not_found');
    return toView(rows[0]);
  }
}
