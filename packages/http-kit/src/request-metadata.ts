import { randomUUID } from 'node:crypto';
import { type ExecutionContext, createParamDecorator } from '@nestjs/common';
import { ApiError, type EventMetadata, type RequestOrigin } from '@rigmarket/contracts';
import type { Request } from 'express';
import type { AuthenticatedRequest, Caller } from './auth.guard';
import { clientAddress, rateLimitConfigFromEnv } from './rate-limit';

export function requestId(request: AuthenticatedRequest): string {
  const id = (request as { id?: unknown }).id;
  return typeof id === 'string' && id ? id : randomUUID();
}

const TRUSTED_PROXIES = rateLimitConfigFromEnv().trustedProxies;
/** Longer paths are cut: the route is for people reading an audit log, not a copy of the request. */
const MAX_ROUTE_LENGTH = 300;

/** Where the request came from (audit log): the client address as the rate limits see it, method and path. */
export function originOf(request: Request): RequestOrigin {
  const path = (request.originalUrl ?? request.url ?? '').split('?')[0] ?? '';
  return {
    ip: clientAddress(request, TRUSTED_PROXIES),
    route: `${request.method} ${path}`.slice(0, MAX_ROUTE_LENGTH),
  };
}

/**
 * Event metadata of a request: the request id correlates and causes, the key is the actor, and the client's
 * address and route say where it came from.
 */
export function metadataOf(request: AuthenticatedRequest): EventMetadata {
  const id = requestId(request);
  const principal = request.principal;
  return {
    correlationId: id,
    causationId: id,
    actor: principal ? { userId: principal.userId, apiKeyId: principal.keyId } : undefined,
    origin: originOf(request),
  };
}

export const RequestMetadata = createParamDecorator(
  (_data: unknown, context: ExecutionContext): EventMetadata =>
    metadataOf(context.switchToHttp().getRequest<AuthenticatedRequest>()),
);

/** Who calls (the AuthGuard's caller) and the event metadata its changes carry: what most routes need. */
export interface Call {
  caller: Caller;
  metadata: EventMetadata;
}

export const CallOf = createParamDecorator((_data: unknown, context: ExecutionContext): Call => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) throw new ApiError(401, 'missing_key', 'Not authenticated');
  return { caller: request.principal, metadata: metadataOf(request) };
});

/** The caller on a public route that identifies callers (`Public({identifiesCaller: true})`), if a valid key came. */
export const OptionalCaller = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Caller | undefined =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal,
);
