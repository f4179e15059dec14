import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { PermissionCategory } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  AUTH_KEY_LOOKUP,
  type AuthKeyLookup,
  type AuthenticatedRequest,
  cachedApiKeyCaller,
} from '@rigmarket/http-kit';
import type { Response } from 'express';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { PollAnswerCache, sendPollAnswer } from './poll-answer-cache';

/** The permission `GET /api/v0/instances/` needs (the route's RequirePermission and its fast path). */
export const LIST_INSTANCES_PERMISSION: PermissionCategory = 'instance_read';

/**
 * The renter's poll, `GET /api/v0/instances/`, when its answer is cached: sent from here, before Nest's route
 * (guard, interceptors, pipes, query bus) runs, with what the route would send (sendPollAnswer: the cached
 * bytes, ETag, 304). Only when the request's API key is in the key cache with the route's permission
 * (cachedApiKeyCaller: the guard's decision for that key) and its owner's answer is cached; any other request
 * (no key, an unknown or instance key, a missing permission, no cached answer) goes on to the route, which
 * answers it as before (refusals, a fresh read that fills the cache). Registered by the module for this
 * route: it runs after the process-wide middleware (request log, metrics, rate limits), and the route pattern
 * it is mounted on is the route's own, so metrics and traces name it alike.
 */
@Injectable()
export class CachedPollMiddleware implements NestMiddleware {
  constructor(
    @Inject(AUTH_KEY_LOOKUP) private readonly keys: AuthKeyLookup,
    @Inject(PollAnswerCache) private readonly cache: PollAnswerCache,
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
  ) {}

  use(request: AuthenticatedRequest, response: Response, next: () => void): void {
    const caller = cachedApiKeyCaller(this.keys, request, LIST_INSTANCES_PERMISSION);
    const answer = caller && this.cache.get(caller.userId, this.runtime.infra.clock.now().getTime());
    if (!answer) return next();
    request.principal = caller;
    sendPollAnswer(response, answer);
  }
}
