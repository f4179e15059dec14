import type { ApiKeyEvent, EventMetadata } from '@rigmarket/contracts';
import { Database } from './database';
import { eventChainMigration } from './event-chain';
import { EventStore } from './event-store';
import { eventStoreMigration, runMigrations } from './migrations';
import { projectionLag } from './projection-lag';
import { type Projection, defineProjection } from './projections';
import { apiKeyCreated } from './testing/api-keys';

const metadata: EventMetadata = { correlationId: 'c', causationId: 'c' };

/** A read model of identity's API keys in sync_maintenance: only its lag is asked here. */
const keys: Projection = defineProjection<ApiKeyEvent>({
  name: 'keys',
  version: 1,
  sources: [{ context: 'identity', streamType: 'api_key' }],
  tables: [],
  eventTypes: ['ApiKeyCreated'],
  async apply() {},
});

/** The same keys and identity's users: a second source type with two events, older than every key's. */
const keysAndUsers: Projection = {
  ...keys,
  sources: [...keys.sources, { context: 'identity', streamType: 'user' }],
};

/**
 * A subscribed projection's lag as `/metrics` and `/readyz` read it (PGlite): counted over all its source
 * events, or over the newest N only (so a probe costs the same however large the store grows), which then
 * says when it found none of them applied.
 */
describe("a projection's lag behind its sources", () => {
  let db: Database;
  const store = new EventStore('identity', 'identity');

  /** API keys 1..n created, each its own stream; returns nothing. */
  const createKeys = async (from: number, to: number): Promise<void> => {
    for (let keyId = from; keyId <= to; keyId += 1)
      await store.append(db, `api_key-${keyId}`, 0, [apiKeyCreated(keyId)], metadata, new Date());
  };
  /** The projection has applied the streams of keys from..to. */
  const applied = (from: number, to: number) =>
    db.execute(
      `INSERT INTO sync_maintenance.projection_stream_positions (projection, stream_id, position)
       SELECT 'keys', 'api_key-' || k, 1 FROM generate_series($1::int, $2::int) AS k`,
      [from, to],
    );

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, 'sync_maintenance', [eventStoreMigration]);
    await runMigrations(db, 'identity', [eventStoreMigration, eventChainMigration]);
    for (const userId of [1, 2])
      await store.append(
        db,
        `user-${userId}`,
        0,
        [{ type: 'UserRegistered', data: { userId } }],
        metadata,
        new Date(),
      );
    await createKeys(1, 30);
  });
  beforeEach(() => db.execute(`DELETE FROM sync_maintenance.projection_stream_positions`));
  afterAll(() => db.close());

  it('given 30 source events of which 24 are applied, then both ways count the 6 behind', async () => {
    await applied(1, 20);
    await applied(25, 28);
    const all = await projectionLag(db, 'sync_maintenance', keys, { subscribedOnly: true });
    const newest = await projectionLag(db, 'sync_maintenance', keys, { subscribedOnly: true, newest: 10 });
    expect(all).toMatchObject({ events: 6, atLeast: false });
    expect(newest).toMatchObject({ events: 6, atLeast: false });
    expect(newest!.oldestMs).toBeGreaterThanOrEqual(0);
  });

  it('given 15 events behind and only the newest 10 examined, then the lag is at least 10', async () => {
    await applied(1, 15);
    expect(await projectionLag(db, 'sync_maintenance', keys, { subscribedOnly: true })).toMatchObject({
      events: 15,
      atLeast: false,
    });
    expect(
      await projectionLag(db, 'sync_maintenance', keys, { subscribedOnly: true, newest: 10 }),
    ).toMatchObject({ events: 10, atLeast: true });
  });

  it('given everything applied, then no lag and not "at least"', async () => {
    await applied(1, 30);
    expect(await projectionLag(db, 'sync_maintenance', keys, { subscribedOnly: true, newest: 10 })).toEqual({
      events: 0,
      oldestMs: 0,
      atLeast: false,
    });
  });

  it('given a second source type whose two events are older than the newest 10 of the first, then they are examined too', async () => {
    await applied(1, 30);
    expect(
      await projectionLag(db, 'sync_maintenance', keysAndUsers, { subscribedOnly: true, newest: 10 }),
    ).toMatchObject({ events: 2, atLeast: false });
    expect(await projectionLag(db, 'sync_maintenance', keysAndUsers, { subscribedOnly: true })).toMatchObject(
      { events: 2, atLeast: false },
    );
  });
});
