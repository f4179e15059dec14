import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  RequirePermission,
  arrayOf,
  int,
  namedSchema,
  nullable,
  objectOf,
  str,
} from '@rigmarket/http-kit';
import type { Response } from 'express';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { decodeCursor, encodeCursor, listAuditLog } from '../read-models/audit-log/queries';
import { findUser } from '../read-models/users/queries';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

const AUDIT_LOG_ENTRY = namedSchema(
  'AuditLogEntry',
  objectOf({
    id: str,
    user_id: int,
    api_key_id: nullable(int),
    ip_address: nullable(str),
    created_at: { type: 'number', description: 'Unix seconds' },
    api_route: nullable(str),
    action: str,
    object: str,
    args: { type: 'object', description: 'The action’s payload without secrets or personal data' },
    correlation_id: nullable(str),
  }),
);

function positiveInt(name: string, text: string | undefined, max: number, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new ApiError(400, 'invalid_args', `${name} must be an integer from 1 to ${max}`);
  return value;
}

/**
 * The account's history of important actions (`vastai show audit-logs`): a bare list, newest first, like the
 * real service; the next page is named by a `Link: <...>; rel="next"` header. An admin may read another
 * account's with `user_id`.
 */
@Controller('api/v0/audit_logs')
@Authenticated()
export class AuditLogController {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get()
  @RequirePermission('user_read')
  @ApiContract({
    ok: arrayOf(AUDIT_LOG_ENTRY),
    query: {
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      before: { type: 'string', description: 'The cursor of the next page (from the Link header)' },
      user_id: { type: 'integer', description: 'Another account (admins only)' },
    },
    errors: { 400: ['invalid_args'], 403: ['not_authorized'], 404: ['user_not_found'] },
  })
  async list(
    @CallOf() { caller }: Call,
    @Res({ passthrough: true }) response: Response,
    @Query('limit') limitText?: string,
    @Query('before') beforeText?: string,
    @Query('user_id') userText?: string,
  ) {
    const limit = positiveInt('limit', limitText, MAX_LIMIT, DEFAULT_LIMIT);
    const before = beforeText ? decodeCursor(beforeText) : null;
    if (beforeText && !before) throw new ApiError(400, 'invalid_args', 'before is not a cursor of this log');
    let userId = caller.userId;
    if (userText !== undefined && userText !== '') {
      const asked = positiveInt('user_id', userText, 2_147_483_647, caller.userId);
      if (asked !== caller.userId) {
        if (!(await findUser(this.runtime, 'user_id = $1', caller.userId))?.is_admin)
          throw ApiError.forbidden(
            "Only administrators can read another account's audit log",
            'not_authorized',
          );
        if (!(await findUser(this.runtime, 'user_id = $1', asked)))
          throw ApiError.notFound('No such user', 'user_not_found');
      }
      userId = asked;
    }
    const { entries, next } = await listAuditLog(this.runtime.db, userId, limit, before);
    if (next) {
      const query = new URLSearchParams({ limit: String(limit), before: encodeCursor(next) });
      if (userId !== caller.userId) query.set('user_id', String(userId));
      response.setHeader('Link', `</api/v0/audit_logs/?${query.toString()}>; rel="next"`);
    }
    return entries;
  }
}
