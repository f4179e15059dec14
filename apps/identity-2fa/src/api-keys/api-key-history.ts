import { type ContextRuntime, ownedStreamAsOf } from '@rigmarket/event-sourcing';
import { apiKeyDecider, apiKeyStreamId } from './api-key.decider';

/** The caller's API key as its events made it, up to `untilMs` (metadata only: hashes never leave). */
export function apiKeyAsOf(runtime: ContextRuntime, userId: number, keyId: number, untilMs?: number) {
  return ownedStreamAsOf(
    runtime,
    apiKeyStreamId(keyId),
    apiKeyDecider,
    (state) => state.status !== 'none' && state.userId === userId,
    untilMs,
  );
}
