import type { ApiKeyEvent, InstanceCreated, InstanceDestroyed, KeyScope } from '@rigmarket/contracts';
import {
  type EnvelopeOf,
  type Migration,
  type Projection,
  type Sql,
  defineProjection,
  insertsInRuns,
  readModelsChanged,
} from '@rigmarket/event-sourcing';

/**
 * Every app authenticates bearers from its own projection of identity's key events, in its own schema:
 * no context reads another's tables.
 */
export function authKeysMigration(): Migration {
  return {
    id: 'auth-0001-api-keys',
    async up(sql, s) {
      await sql.execute(`
        CREATE TABLE ${s}.auth_api_keys (
          key_id INTEGER PRIMARY KEY,
          user_id INTEGER NOT NULL,
          key_hash TEXT NOT NULL UNIQUE,
          permissions JSONB,
          kind TEXT NOT NULL,
          revoked BOOLEAN NOT NULL DEFAULT FALSE
        )`);
    },
  };
}

/** Session keys expire: the expiry from ApiKeyCreated.expiresAt (null: never). */
export function authKeysExpiryMigration(): Migration {
  return {
    id: 'auth-0002-api-key-expiry',
    async up(sql, s) {
      await sql.execute(`ALTER TABLE ${s}.auth_api_keys ADD COLUMN expires_at TIMESTAMPTZ`);
    },
  };
}

/** An instance key's row: no key id of identity's (those are positive), so minus the instance id. */
export const instanceKeyRowId = (instanceId: number): number => -instanceId;

/**
 * identity's API and session keys, and the instance keys instance-lifecycle issues (their hashes, from
 * InstanceCreated): every app can then tell an instance key from an unknown one and refuse it with 403
 * rather than 401 off the routes that admit it.
 */
export function authKeysProjection(schema: string): Projection {
  const table = `${schema}.auth_api_keys`;
  type Event = EnvelopeOf<ApiKeyEvent | InstanceCreated | InstanceDestroyed>;
  const instanceKeyRow = (event: EnvelopeOf<InstanceCreated>) => [
    instanceKeyRowId(event.data.instanceId),
    event.data.renter,
    event.data.apiKeyHash,
    INSTANCE_KEY_PERMISSIONS,
  ];
  const applyOne = async (sql: Sql, event: Event): Promise<void> => {
    switch (event.type) {
      case 'ApiKeyCreated':
        await sql.execute(
          `INSERT INTO ${table} (key_id, user_id, key_hash, permissions, kind, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (key_id) DO NOTHING`,
          [
            event.data.keyId,
            event.data.userId,
            event.data.keyHash,
            JSON.stringify(event.data.permissions),
            event.data.kind,
            event.data.expiresAt ?? null,
          ],
        );
        return;
      case 'ApiKeyReset':
        await sql.execute(`UPDATE ${table} SET key_hash = $2 WHERE key_id = $1`, [
          event.data.keyId,
          event.data.keyHash,
        ]);
        return;
      case 'ApiKeyDeleted':
        // The hash is kept (revoked) so the row still explains why a value is refused.
        await sql.execute(`UPDATE ${table} SET revoked = TRUE WHERE key_id = $1`, [event.data.keyId]);
        return;
      case 'InstanceCreated':
        if (!event.data.apiKeyHash) return; // created before instance keys were published
        await sql.execute(
          `INSERT INTO ${table} (key_id, user_id, key_hash, permissions, kind) VALUES ($1, $2, $3, $4, 'instance')
             ON CONFLICT (key_id) DO NOTHING`,
          instanceKeyRow(event),
        );
        return;
      case 'InstanceDestroyed':
        await sql.execute(`UPDATE ${table} SET revoked = TRUE WHERE key_id = $1`, [
          instanceKeyRowId(event.data.instanceId),
        ]);
        return;
    }
  };
  const applyInstanceKeyRuns = insertsInRuns<
    ApiKeyEvent | InstanceCreated | InstanceDestroyed,
    'InstanceCreated'
  >({
    type: 'InstanceCreated',
    table,
    columns: [
      ['key_id', 'int'],
      ['user_id', 'int'],
      ['key_hash', 'text'],
      ['permissions', 'jsonb'],
      ['kind', 'text'],
    ],
    // created before instance keys were published: no row, as apply
    row: (event) => (event.data.apiKeyHash ? [...instanceKeyRow(event), 'instance'] : undefined),
    tail: 'ON CONFLICT (key_id) DO NOTHING',
    apply: applyOne,
  });
  // The key caches (auth-key-cache.ts) keep keys found valid, never a key found missing: a new key (an
  // insert that leaves every existing row as it was) cannot change an answer they hold, nor can the events
  // of its sources' streams it does not apply (an instance's status), so only a reset, a deletion or a
  // destroyed instance empties them. A rent (its instance key) then leaves them warm.
  const signals = (events: readonly { type: string }[]): readonly string[] =>
    events.some((e) => REVOKING.has(e.type)) ? [table] : [];
  return defineProjection<ApiKeyEvent | InstanceCreated | InstanceDestroyed>({
    name: 'auth_api_keys',
    version: 2,
    sources: [
      { context: 'identity', streamType: 'api_key' },
      { context: 'instance', streamType: 'instance' },
    ],
    tables: [table],
    eventTypes: ['ApiKeyCreated', 'ApiKeyReset', 'ApiKeyDeleted', 'InstanceCreated', 'InstanceDestroyed'],
    async apply(sql, event) {
      // The projection runners report the change too; this covers an apply called on its own (the key
      // caches of auth-key-cache.ts follow the table: told when the transaction commits).
      readModelsChanged(sql, signals([event]));
      await applyOne(sql, event);
    },
    // A delivery of many rents: their instance keys in one INSERT (every app keeps this table).
    applyBatch(sql, events) {
      readModelsChanged(sql, signals(events));
      return applyInstanceKeyRuns(sql, events);
    },
    signals,
  });
}

/** The events that change a key row the projection holds (the others only add rows). */
const REVOKING: ReadonlySet<string> = new Set(['ApiKeyReset', 'ApiKeyDeleted', 'InstanceDestroyed']);

const INSTANCE_KEY_PERMISSIONS = JSON.stringify({ api: { instance_write: {} } });

export interface AuthenticatedKey {
  keyId: number;
  userId: number;
  kind: string;
  scope: KeyScope;
}
