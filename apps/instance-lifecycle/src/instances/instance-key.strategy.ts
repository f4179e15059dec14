import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  type AuthStrategy,
  type AuthenticatedRequest,
  type Caller,
  INSTANCE_KEY_FORBIDDEN,
  bearerValue,
  hashKey,
} from '@rigmarket/http-kit';
import { SCHEMA } from '../schema';

export { INSTANCE_KEY_FORBIDDEN };

/**
 * The instance keys of instances created before their hash was published in InstanceCreated (the AuthGuard's
 * API-key strategy finds the others in auth_api_keys), from instance_keys: such a key acts as its
 * instance's owner, on routes that admit `instance_key` only, and for that one instance only.
 */
export class InstanceKeyStrategy implements AuthStrategy {
  readonly credential = 'instance_key';
  readonly notAdmitted = INSTANCE_KEY_FORBIDDEN;

  constructor(private readonly runtime: ContextRuntime) {}

  async authenticate(request: AuthenticatedRequest): Promise<Caller | null> {
    const value = bearerValue(request);
    if (!value) return null;
    const rows = await this.runtime.db.query<{ instance_id: number; owner_id: number }>(
      `SELECT instance_id, owner_id FROM ${SCHEMA}.instance_keys WHERE key_hash = $1`,
      [hashKey(value)],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      credential: 'instance_key',
      keyId: 0,
      userId: Number(row.owner_id),
      kind: 'instance',
      scope: { api: { instance_write: {} } },
      instanceId: Number(row.instance_id),
    };
  }
}
