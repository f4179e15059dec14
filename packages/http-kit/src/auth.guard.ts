import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  Optional,
  SetMetadata,
  UseGuards,
  applyDecorators,
  createParamDecorator,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, type PermissionCategory, isRefusal, scopeAllows } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import type { Request } from 'express';
import type { AuthKeyCache } from './auth-key-cache';
import type { AuthenticatedKey } from './auth-keys.projection';

export const AUTH_KEY_LOOKUP = Symbol('AUTH_KEY_LOOKUP');
/** The strategies a context adds to the API-key one (instance keys, 2FA login secrets). */
export const AUTH_STRATEGIES = Symbol('AUTH_STRATEGIES');

/** How a caller proved who it is. */
export type Credential = 'api_key' | 'instance_key' | 'tfa_secret';

/** Who is calling: the account, the key (null for a 2FA login secret) and what the key may do. */
export interface Caller extends AuthenticatedKey {
  credential: Credential;
  /** An instance key opens this one instance only. */
  instanceId?: number;
}

export interface AuthenticatedRequest extends Request {
  principal?: Caller;
}

/** What a route admits, from its decorators (a method's settings override its controller's). */
export interface AuthPolicy {
  /** Credentials besides the API key that the route admits. */
  accepts: readonly Credential[];
  /** The permission category a scoped key needs. */
  permission?: PermissionCategory;
  /**
   * How refusals read: `bearer` (401 missing_key / invalid_key) or `auth_error` (always 403 auth_error, so a
   * stranger learns nothing of the route; the 2FA routes).
   */
  refusal: 'bearer' | 'auth_error';
}

/**
 * One way of proving identity. `authenticate` answers the caller, or null when the request carries no
 * credential of this kind (the guard then asks the next strategy). It throws only when the store fails.
 */
export interface AuthStrategy {
  readonly credential: Credential;
  authenticate(request: AuthenticatedRequest, policy: AuthPolicy): Promise<Caller | null>;
  /** Why a route that does not admit this credential refuses it (403). */
  readonly notAdmitted?: string;
}

const POLICY = 'rigmarket:auth-policy';
const PERMISSION = 'rigmarket:permission';
const PUBLIC = 'rigmarket:public';

/** A controller (or route) whose callers must authenticate; `accepts` adds credentials besides API keys. */
export const Authenticated = (policy: Partial<Omit<AuthPolicy, 'permission'>> = {}) =>
  applyDecorators(SetMetadata(POLICY, policy), UseGuards(AuthGuard));
/** The permission category a route needs (the client-compat route table). */
export const RequirePermission = (category: PermissionCategory) => SetMetadata(PERMISSION, category);
/** A route that also admits the given credentials (its controller's policy otherwise). */
export const Admits = (...accepts: Credential[]) => SetMetadata(POLICY, { accepts });
/**
 * A route anyone may call without a key. With `identifiesCaller`, a valid API key sent along still names the
 * caller (the route decides what a caller may do that an anonymous one may not); an invalid one is ignored.
 */
export const Public = (options: { identifiesCaller?: boolean } = {}) =>
  SetMetadata(PUBLIC, options.identifiesCaller ? 'identifies' : true);

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
    /** Keys found valid (auth-key-cache.ts). */
    private readonly cache?: AuthKeyCache,
  ) {}

  /** The key a bearer value belongs to if the cache holds it (no query; undefined otherwise). */
  findCached(value: string): AuthenticatedKey | undefined {
    return this.cache?.get(hashKey(value), this.now().getTime());
  }

  async find(value: string): Promise<AuthenticatedKey | null> {
    const hash = hashKey(value);
    const now = this.now();
    const cached = this.cache?.get(hash, now.getTime());
    if (cached) return cached;
    const mark = this.cache?.mark();
    const rows = await this.db.query<{
      key_id: number;
      user_id: number;
      kind: string;
      permissions: unknown;
      key_hash: string;
      expires_at: Date | string | null;
    }>(
      `SELECT key_id, user_id, kind, permissions, key_hash, expires_at FROM ${this.schema}.auth_api_keys
       WHERE key_hash = $1 AND NOT revoked AND (expires_at IS NULL OR expires_at > $2)`,
      [hash, now.toISOString()],
    );
    const row = rows[0];
    // The index found the row by hash; compare again in constant time so no secret-dependent branch
    // leaks through timing.
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
    const permissions = typeof row.permissions === 'string' ? JSON.parse(row.permissions) : row.permissions;
    const key: AuthenticatedKey = {
      keyId: Number(row.key_id),
      userId: Number(row.user_id),
      kind: row.kind,
      scope: permissions ?? null,
    };
    if (this.cache && mark !== undefined) {
      const expiresAt = row.expires_at === null ? null : new Date(row.expires_at).getTime();
      this.cache.store(hash, key, expiresAt, mark);
    }
    return key;
  }
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

/**
 * A route's fast path (a cached answer sent before Nest's guard runs): the caller of a request whose API key
 * is in the lookup's cache, as the AuthGuard would find it, if the key may call a route needing `permission`.
 * Undefined in every other case (no key, a key not cached, an instance key, a scope without the permission):
 * the route's guard then decides, with its refusals.
 */
export function cachedApiKeyCaller(
  lookup: AuthKeyLookup,
  request: Request,
  permission: PermissionCategory,
): Caller | undefined {
  const value = bearerValue(request);
  const key = value ? lookup.findCached(value) : undefined;
  if (!key || key.kind === 'instance' || !scopeAllows(key.scope, permission)) return undefined;
  return { ...key, credential: 'api_key' };
}

export const INSTANCE_KEY_FORBIDDEN = 'An instance API key may only start, stop or destroy its own instance';

/**
 * API keys and session keys that identity issued, and the instance keys instance-lifecycle issued, from this
 * context's projection of their events (auth_api_keys). An instance key is that credential, for its instance.
 */
export class ApiKeyStrategy implements AuthStrategy {
  readonly credential = 'api_key';
  readonly notAdmitted = INSTANCE_KEY_FORBIDDEN;
  constructor(private readonly lookup: AuthKeyLookup) {}

  async authenticate(request: AuthenticatedRequest): Promise<Caller | null> {
    const value = bearerValue(request);
    const key = value ? await this.lookup.find(value) : null;
    if (!key) return null;
    if (key.kind === 'instance')
      return { ...key, keyId: 0, credential: 'instance_key', instanceId: -key.keyId };
    return { ...key, credential: 'api_key' };
  }
}

/**
 * The one guard of every route: asks each strategy in turn who the caller is, then checks that the route
 * admits that credential and that a scoped key holds the route's permission. Guards run before the body is
 * validated, so an anonymous caller is refused before any field is judged.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly strategies: readonly AuthStrategy[];

  constructor(
    @Inject(AUTH_KEY_LOOKUP) lookup: AuthKeyLookup,
    private readonly reflector: Reflector,
    @Optional() @Inject(AUTH_STRATEGIES) extra: readonly AuthStrategy[] | null,
  ) {
    this.strategies = [new ApiKeyStrategy(lookup), ...(extra ?? [])];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()] as const;
    const open = this.reflector.getAllAndOverride<boolean | 'identifies' | undefined>(PUBLIC, [...targets]);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (open === 'identifies') {
      const caller = await this.strategies[0]!.authenticate(request, this.policyOf(targets)).catch(
        () => null,
      );
      if (caller?.credential === 'api_key') request.principal = caller;
      return true;
    }
    if (open) return true;
    const policy = this.policyOf(targets);
    let caller: Caller | null = null;
    let strategy: AuthStrategy | undefined;
    try {
      for (strategy of this.strategies) {
        caller = await strategy.authenticate(request, policy);
        if (caller) break;
      }
    } catch (error) {
      if (isRefusal(error)) throw error;
      throw new ApiError(503, 'service_unavailable', 'The key store is unavailable; retry shortly');
    }
    if (!caller || !strategy) throw this.unauthenticated(policy, bearerValue(request) !== undefined);
    if (caller.credential !== 'api_key' && !policy.accepts.includes(caller.credential)) {
      throw policy.refusal === 'auth_error'
        ? this.unauthenticated(policy, true)
        : ApiError.forbidden(strategy.notAdmitted ?? 'This credential cannot call this route');
    }
    if (policy.permission && !scopeAllows(caller.scope, policy.permission)) {
      throw ApiError.forbidden(
        `This API key lacks the ${policy.permission} permission needed for this request`,
      );
    }
    request.principal = caller;
    return true;
  }

  private policyOf(targets: readonly [object, object]): AuthPolicy {
    const [handler, controller] = targets;
    const own = this.reflector.get<Partial<AuthPolicy> | undefined>(POLICY, handler as never) ?? {};
    const base = this.reflector.get<Partial<AuthPolicy> | undefined>(POLICY, controller as never) ?? {};
    return {
      accepts: [...(base.accepts ?? []), ...(own.accepts ?? [])],
      refusal: own.refusal ?? base.refusal ?? 'bearer',
      permission: this.reflector.getAllAndOverride<PermissionCategory | undefined>(PERMISSION, [
        handler as never,
        controller as never,
      ]),
    };
  }

  private unauthenticated(policy: AuthPolicy, credentialGiven: boolean): ApiError {
    if (policy.refusal === 'auth_error') {
      return new ApiError(
        403,
        'auth_error',
        'No valid authentication: send a bearer key, or the tfa_secret from your login',
      );
    }
    return credentialGiven
      ? new ApiError(401, 'invalid_key', 'Invalid user key')
      : new ApiError(401, 'missing_key', 'Missing API key: send the header Authorization: Bearer <API_KEY>');
  }
}

/** The caller the AuthGuard found. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) throw new ApiError(401, 'missing_key', 'Not authenticated');
  return request.principal;
});
