import { randomUUID } from 'node:crypto';
import { type ExecutionContext, createParamDecorator } from '@nestjs/common';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { AuthenticatedRequest, Caller } from './auth.guard';

export function requestId(request: AuthenticatedRequest): string {
  const id = (request as { id?: unknown }).id;
  return typeof id === 'string' && id ? id : randomUUID();
}

/** Event metadata of a request: the request id correlates and causes, the key is the actor. */
export function metadataOf(request: AuthenticatedRequest): EventMetadata {
  const id = requestId(request);
  const principal = request.principal;
  return {
    correlationId: id,
    causationId: id,
    actor: principal ? { userId: principal.userId, apiKeyId: principal.keyId } : undefined,
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
