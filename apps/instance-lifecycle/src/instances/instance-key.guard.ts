import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  AUTH_KEY_LOOKUP,
  type AuthKeyLookup,
  type AuthenticatedRequest,
  BearerGuard,
  bearerValue,
} from '@rigmarket/http-kit';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { instanceKeyOwner } from './instances.handlers';

const INSTANCE_KEY_ALLOWED = 'rigmarket:instance-key-allowed';
/** A route an instance key may call (start, stop or destroy of its own instance). */
export const InstanceKeyAllowed = () => SetMetadata(INSTANCE_KEY_ALLOWED, true);

export interface InstanceKeyRequest extends AuthenticatedRequest {
  /** Set when the bearer is an instance key: the one instance it opens. */
  instanceKeyFor?: number;
}

export const INSTANCE_KEY_FORBIDDEN = 'An instance API key may only start, stop or destroy its own instance';

/**
 * The BearerGuard (identity's keys, permission categories), plus the instance keys instance-lifecycle
 * issues on creation: such a key is accepted on routes marked InstanceKeyAllowed only, as its owner.
 */
@Injectable()
export class InstanceBearerGuard implements CanActivate {
  private readonly bearer: BearerGuard;
  constructor(
    @Inject(AUTH_KEY_LOOKUP) lookup: AuthKeyLookup,
    private readonly reflector: Reflector,
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
  ) {
    this.bearer = new BearerGuard(lookup, reflector);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    try {
      return await this.bearer.canActivate(context);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'invalid_key') throw error;
      const request = context.switchToHttp().getRequest<InstanceKeyRequest>();
      const key = await instanceKeyOwner(this.runtime, bearerValue(request) ?? '');
      if (!key) throw error;
      if (
        !this.reflector.getAllAndOverride<boolean>(INSTANCE_KEY_ALLOWED, [
          context.getHandler(),
          context.getClass(),
        ])
      )
        throw ApiError.forbidden(INSTANCE_KEY_FORBIDDEN);
      request.principal = {
        keyId: 0,
        userId: key.ownerId,
        kind: 'instance',
        scope: { api: { instance_write: {} } },
      };
      request.instanceKeyFor = key.instanceId;
      return true;
    }
  }
}
