import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@rigmarket/contracts';
import { Database, type Sql, applyInlineProjections } from '@rigmarket/event-sourcing';
import { AuthKeyCache } from './auth-key-cache';
import type { Request } from 'express';
import { AuthKeyLookup, cachedApiKeyCaller, hashKey } from './auth.guard';
import { authKeysExpiryMigration, authKeysMigration, authKeysProjection } from './auth-keys.projection';

const SCHEMA = 'keycache';
const projection = authKeysProjection(SCHEMA);
let position = 0;

function event(streamId: string, type: string, data: Record<string, unknown>): EventEnvelope {
  position += 1;
  return {
    eventId: randomUUID(),
    type,
    schemaVersion: 1,
    streamId,
    streamType: 'api_key',
    streamPosition: position,
    globalPosition: String(position),
    occurredAt: new Date().toISOString(),
    context: 'identity',
    data,
    metadata: { correlationId: 'spec', causationId: 'spec' },
  } as EventEnvelope;
}

const created = (keyId: number, value: string, expiresAt?: string, permissions: unknown = null) =>
  event(`api_key-${keyId}`, 'ApiKeyCreated', {
    keyId,
    userId: 7,
    name: null,
    keyHash: hashKey(value),
    permissions,
    kind: expiresAt ? 'session' : 'api',
    createdAt: new Date().toISOString(),
    ...(expiresAt ? { expiresAt } : {}),
  });

/**
 * The embedded key cache (auth-key-cache.ts): a key found valid is not looked up again, and every change of
 * the key projection (a deletion, a reset) is seen by the very next request, as without the cache.
 */
describe('API key look-ups cached on the embedded database', () => {
  let db: Database;
  let queries = 0;
  let clock = new Date('2026-05-01T12:00:00.000Z');
  let lookup: AuthKeyLookup;
  /** The database with a count of the look-ups that reached it (and a hook run after each). */
  let afterQuery: (() => Promise<void>) | undefined;
  const counted: Sql = {
    async query<Row>(sql: string, params?: unknown[]) {
      queries += 1;
      const rows = await db.query<Row>(sql, params);
      const hook = afterQuery;
      afterQuery = undefined;
      await hook?.();
      return rows;
    },
    execute: (sql, params) => db.execute(sql, params),
  };
  const apply = (envelope: EventEnvelope) => db.transaction((sql) => projection.apply(sql, envelope));

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await db.execute(`CREATE SCHEMA ${SCHEMA}`);
    await authKeysMigration().up(db, SCHEMA);
    await authKeysExpiryMigration().up(db, SCHEMA);
    lookup = new AuthKeyLookup(
      counted,
      SCHEMA,
      () => clock,
      new AuthKeyCache(db.watchReadModels([`${SCHEMA}.auth_api_keys`])),
    );
  });
  afterAll(() => db?.close());
  beforeEach(() => {
    queries = 0;
  });

  it('answers a known key from memory after the first look-up, and never caches an unknown one', async () => {
    await apply(created(1, 'key-one'));
    expect(await lookup.find('key-one')).toEqual({ keyId: 1, userId: 7, kind: 'api', scope: null });
    expect(await lookup.find('key-one')).toEqual({ keyId: 1, userId: 7, kind: 'api', scope: null });
    expect(queries).toBe(1);
    expect(await lookup.find('no-such-key')).toBeNull();
    expect(await lookup.find('no-such-key')).toBeNull();
    expect(queries).toBe(3);
  });

  it('refuses a deleted key on the next request', async () => {
    await apply(created(2, 'key-two'));
    expect(await lookup.find('key-two')).not.toBeNull();
    expect(await lookup.find('key-two')).not.toBeNull();
    await apply(event('api_key-2', 'ApiKeyDeleted', { keyId: 2, deletedAt: clock.toISOString() }));
    expect(await lookup.find('key-two')).toBeNull();
  });

  it('refuses the old value of a reset key and accepts the new one', async () => {
    await apply(created(3, 'key-three'));
    expect(await lookup.find('key-three')).not.toBeNull();
    await apply(
      event('api_key-3', 'ApiKeyReset', {
        keyId: 3,
        keyHash: hashKey('key-three-new'),
        resetAt: clock.toISOString(),
      }),
    );
    expect(await lookup.find('key-three')).toBeNull();
    expect(await lookup.find('key-three-new')).toMatchObject({ keyId: 3 });
  });

  it('refuses a cached session key once it expired by the clock', async () => {
    await apply(created(4, 'session-four', '2026-05-01T13:00:00.000Z'));
    expect(await lookup.find('session-four')).toMatchObject({ keyId: 4, kind: 'session' });
    clock = new Date('2026-05-01T12:59:59.000Z');
    expect(await lookup.find('session-four')).toMatchObject({ keyId: 4 });
    clock = new Date('2026-05-01T13:00:00.000Z');
    expect(await lookup.find('session-four')).toBeNull();
  });

  it("names a request's caller from the cache alone (a route's fast path), only for a key the route admits", async () => {
    const bearer = (value: string) =>
      ({ headers: { authorization: `Bearer ${value}` }, query: {} }) as Request;
    await apply(created(6, 'key-six'));
    await apply(created(7, 'key-seven', undefined, { api: { instance_write: {} } }));
    // Not looked up yet: the fast path does not know the key (the route's guard looks it up).
    expect(cachedApiKeyCaller(lookup, bearer('key-six'), 'instance_read')).toBeUndefined();
    await lookup.find('key-six');
    await lookup.find('key-seven');
    queries = 0;
    expect(cachedApiKeyCaller(lookup, bearer('key-six'), 'instance_read')).toEqual({
      keyId: 6,
      userId: 7,
      kind: 'api',
      scope: null,
      credential: 'api_key',
    });
    // A scoped key without the route's permission, an unknown key, no key: the guard decides.
    expect(cachedApiKeyCaller(lookup, bearer('key-seven'), 'instance_read')).toBeUndefined();
    expect(cachedApiKeyCaller(lookup, bearer('key-seven'), 'instance_write')).toMatchObject({ keyId: 7 });
    expect(cachedApiKeyCaller(lookup, bearer('no-such-key'), 'instance_read')).toBeUndefined();
    expect(
      cachedApiKeyCaller(lookup, { headers: {}, query: {} } as Request, 'instance_read'),
    ).toBeUndefined();
    expect(queries).toBe(0);
    // A deleted key is forgotten at once.
    await apply(event('api_key-6', 'ApiKeyDeleted', { keyId: 6, deletedAt: clock.toISOString() }));
    expect(cachedApiKeyCaller(lookup, bearer('key-six'), 'instance_read')).toBeUndefined();
  });

  it('does not keep the answer of a look-up that a deletion overtook', async () => {
    await apply(created(5, 'key-five'));
    // The look-up reads the key as valid; the deletion is applied before the look-up ends.
    afterQuery = () =>
      apply(event('api_key-5', 'ApiKeyDeleted', { keyId: 5, deletedAt: clock.toISOString() }));
    expect(await lookup.find('key-five')).not.toBeNull();
    expect(await lookup.find('key-five')).toBeNull();
  });

  it('keeps serving cached keys from memory while new keys are added (a rent), and forgets them when an instance key is revoked', async () => {
    await apply(created(8, 'key-eight'));
    expect(await lookup.find('key-eight')).toMatchObject({ keyId: 8 });
    const instanceEvent = (type: string, data: Record<string, unknown>): EventEnvelope => ({
      ...event('instance-9', type, data),
      context: 'instance',
      streamType: 'instance',
    });
    // A rent's instance key, applied as the rent's own transaction applies it (inline), and a new API key.
    await db.transaction((sql) =>
      applyInlineProjections(
        sql,
        SCHEMA,
        [projection],
        [
          instanceEvent('InstanceCreated', {
            instanceId: 9,
            renter: 7,
            apiKeyHash: hashKey('instance-nine'),
          }),
          // An event of the instance's stream that the key table does not apply (its status).
          instanceEvent('InstanceStateChanged', { instanceId: 9 }),
        ],
        { positionsMoved: true },
      ),
    );
    await apply(created(10, 'key-ten'));
    queries = 0;
    expect(await lookup.find('key-eight')).toMatchObject({ keyId: 8 });
    expect(queries).toBe(0);
    expect(await lookup.find('instance-nine')).toMatchObject({ kind: 'instance' });
    expect(await lookup.find('key-ten')).toMatchObject({ keyId: 10 });
    expect(queries).toBe(2);
    // The instance destroyed: its key is refused at once (the cache was emptied), the others looked up again.
    await db.transaction((sql) =>
      applyInlineProjections(
        sql,
        SCHEMA,
        [projection],
        [instanceEvent('InstanceDestroyed', { instanceId: 9 })],
        {
          positionsMoved: true,
        },
      ),
    );
    expect(await lookup.find('instance-nine')).toBeNull();
    expect(await lookup.find('key-eight')).toMatchObject({ keyId: 8 });
    expect(queries).toBe(4);
  });
});
