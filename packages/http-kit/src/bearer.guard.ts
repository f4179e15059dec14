import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  createParamDecorator,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, type PermissionCategory, scopeAllows } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import type { Request } from 'express';
import type { AuthenticatedKey } from './auth-keys.projection';

export const AUTH_KEY_LOOKUP = Symbol('AUTH_KEY_LOOKUP');
const PERMISSION = 'rigmarket:permission';
const PUBLIC = 'rigmarket:public';

/** The permission category a route needs (docs/client-compat.md 2.8's route table). */
export const RequirePermission = (category: PermissionCategory) => SetMetadata(PERMISSION, category);
/** A route anyone may call without a key. */
export const Public = () => SetMetadata(PUBLIC, true);

export function hashKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Finds the key a bearer value belongs to, in this context's projection of key events. */
export class AuthKeyLookup {
  constructor(
    private readonly db: Sql,
    private readonly schema: string,
    /** The context's clock (sessions expire by it, as they were issued by it). */
    private readonly now: () => Date = () => new Date(),
  ) {}

  async find(value: string): Promise<AuthenticatedKey | null> {
    const hash = hashKey(value);
    const rows = await this.db.query<{
      key_id: number;
      user_id: number;
      kind: string;
      permissions: unknown;
      key_hash: string;
    }>(
      `SELECT key_id, user_id, kind, permissions, key_hash FROM ${this.schema}.auth_api_keys
       WHERE key_hash = $1 AND NOT revoked AND (expires_at IS NULL OR expires_at > $2)`,
      [hash, this.now().toISOString()],
    );
    const row = rows[0];
    // The index found the row by hash; compare again in constant time so no secret-dependent branch
    // leaks through timing.
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
    const permissions = typeof row.permissions === 'string' ? JSON.parse(row.permissions) : row.permissions;
    return {
      keyId: Number(row.key_id),
      userId: Number(row.user_id),
      kind: row.kind,
      scope: permissions ?? null,
    };
  }
}

export interface AuthenticatedRequest extends Request {
  principal?: AuthenticatedKey;
}

/** The bearer value: `Authorization: Bearer <key>`, `?api_key=` as older clients send it, or the `session_key` cookie. */
export function bearerValue(request: Request): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match?.[1]) return match[1].trim();
  }
  const query = request.query?.api_key;
  if (typeof query === 'string' && query.length > 0) return query;
  // The HttpOnly session cookie a logged-out caller receives when it completes a 2FA login.
  const cookie = request.headers.cookie;
  const session = cookie ? /(?:^|;\s*)session_key=([0-9a-f]{64})(?:;|$)/.exec(cookie) : null;
  return session?.[1];
}

@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    @Inject(AUTH_KEY_LOOKUP) private readonly lookup: AuthKeyLookup,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const value = bearerValue(request);
    if (!value)
      throw new ApiError(
        401,
        'missing_key',
        'Missing API key: send the header Authorization: Bearer <API_KEY>',
      );
    let key: AuthenticatedKey | null;
    try {
      key = await this.lookup.find(value);
    } catch {
      throw new ApiError(503, 'service_unavailable', 'Key store unavailable; retry shortly');
    }
    if (!key) throw new ApiError(401, 'invalid_key', 'Invalid user key');
    request.principal = key;
    const needed = this.reflector.getAllAndOverride<PermissionCategory | undefined>(PERMISSION, targets);
    if (needed && !scopeAllows(key.scope, needed)) {
      throw new ApiError(
        403,
        'forbidden',
        `This API key lacks the ${needed} permission needed for this request`,
      );
    }
    return true;
  }
}

export const Principal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedKey => {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!request.principal) throw new ApiError(401, 'missing_key', 'Not authenticated');
    return request.principal;
  },
);
