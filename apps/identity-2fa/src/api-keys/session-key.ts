import type { EventMetadata, KeyScope } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { type IdentityOptions, sessionExpiry } from '../identity.tokens';
import { newKeyValue } from '../secrets';
import { apiKeyDecider, apiKeyStreamId } from './api-key.decider';

/**
 * A login's session: a key of kind `session` that expires (RIGMARKET_SESSION_TTL_MS), usable as a bearer
 * like any key. Returns the value, shown to the caller once; only its hash is in the event.
 */
export async function issueSessionKey(
  runtime: ContextRuntime,
  options: IdentityOptions,
  session: { keyId: number; userId: number; name: string; scope: KeyScope },
  metadata: EventMetadata,
): Promise<string> {
  const value = newKeyValue();
  await runtime.runner.run(
    apiKeyStreamId(session.keyId),
    apiKeyDecider,
    {
      type: 'CreateApiKey',
      keyId: session.keyId,
      userId: session.userId,
      name: session.name,
      keyHash: hashKey(value),
      permissions: session.scope,
      kind: 'session',
      expiresAt: sessionExpiry(runtime.runner.clock.now(), options),
    },
    metadata,
  );
  return value;
}
