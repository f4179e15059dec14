import { randomUUID } from 'node:crypto';
import { type ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { EventMetadata } from '@rigmarket/contracts';
import type { AuthenticatedRequest } from './auth.guard';

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
