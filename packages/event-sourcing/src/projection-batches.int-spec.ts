import type { ApiKeyEvent, DomainEvent, EventEnvelope, EventMetadata } from '@rigmarket/contracts';
import { createTestDatabase } from '@rigmarket/testing';
import { Database } from './database';
import { deadLettersMigration } from './dead-letters';
import { EventStore } from './event-store';
import { eventChainMigration } from './event-chain';
import { databaseStatements, databaseTransactions } from './metrics';
import { eventStoreMigration, runMigrations } from './migrations';
import {
  type Projection,
  applyProjectionBatch,
  contextProjectionsSubscription,
  defineProjection,
  projectionSubscription,
  rebuildInChunks,
} from './projections';
import type { Delivery } from './transport';

const AT = '2026-05-01T12:00:00.000Z';
const metadata: EventMetadata = { correlationId: 'c', causationId: 'c' };
let seq = 0;
const envelope = (streamId: string, streamPosition: number, type: string, data: unknown): EventEnvelope => ({
  eventId: `00000000-0000-4000-8000-${String((seq += 1)).padStart(12, '0')}`,
  type,
  schemaVersion: 1,
  streamId,
  streamType: 'api_key',
  streamPosition,
  globalPosition: String(seq),
  occurredAt: AT,
  context: 'identity',
  data,
  metadata,
});
const keyData = (keyId: number, name: string | null = null) => ({
  keyId,
  userId: 2,
  name,
  keyHash: 'a'.repeat(64),
  permissions: null,
  kind: 'api',
  createdAt: AT,
});
const created = (keyId: number, position = 1, name: string | null = null) =>
  envelope(`api_key-${keyId}`, position, 'ApiKeyCreated', keyData(keyId, name));
const deleted = (keyId: number, position: number) =>
  envelope(`api_key-${keyId}`, position, 'ApiKeyDeleted', { keyId, deletedAt: AT });
const deliveries = (events: readonly EventEnvelope[], first = 0): Delivery[] =>
  events.map((e, i) => ({
    envelope: e,
    delivery: { topic: 'identity.api_key', partition: 0, offset: String(first + i) },
  }));

/**
 * A projection of API keys into `sync_maintenance.keys`, whose CHECK refuses key 13 (a real database error
 * in the middle of a batch). `applyBatch` writes each batch with one INSERT and one DELETE; `batches`
 * counts its calls.
 */
function keysProjection(batches: { calls: number }): Projection {
  return defineProjection<ApiKeyEvent>({
    name: 'keys',
    version: 1,
    sources: [{ context: 'identity', streamType: 'api_key' }],
    tables: ['sync_maintenance.keys'],
    eventTypes: ['ApiKeyCreated', 'ApiKeyDeleted'],
    async apply(sql, event) {
      if (event.type === 'ApiKeyCreated')
        await sql.execute(`INSERT INTO sync_maintenance.keys (key_id, name) VALUES ($1, $2)`, [
          event.data.keyId,
          event.data.name,
        ]);
      else if (event.type === 'ApiKeyDeleted')
        await sql.execute(`DELETE FROM sync_maintenance.keys WHERE key_id = $1`, [event.data.keyId]);
    },
    async applyBatch(sql, events) {
      batches.calls += 1;
      // Creations and deletions of one key are never in one batch here; the spec feeds them so.
      const made = events.flatMap((e) => (e.type === 'ApiKeyCreated' ? [e.data] : []));
      const gone = events.flatMap((e) => (e.type === 'ApiKeyDeleted' ? [e.data.keyId] : []));
      if (made.length > 0)
        await sql.execute(
          `INSERT INTO sync_maintenance.keys (key_id, name) SELECT * FROM unnest($1::int[], $2::text[])`,
          [made.map((k) => k.keyId), made.map((k) => k.name)],
        );
      if (gone.length > 0)
        await sql.execute(`DELETE FROM sync_maintenance.keys WHERE key_id = ANY($1::int[])`, [gone]);
    },
  });
}

/** A second read model of the same events, `sync_maintenance.key_names`, which refuses nothing. */
const namesProjection: Projection = defineProjection<ApiKeyEvent>({
  name: 'key_names',
  version: 1,
  sources: [{ context: 'identity', streamType: 'api_key' }],
  tables: ['sync_maintenance.key_names'],
  eventTypes: ['ApiKeyCreated', 'ApiKeyDeleted'],
  async apply(sql, event) {
    if (event.type === 'ApiKeyCreated')
      await sql.execute(`INSERT INTO sync_maintenance.key_names (key_id, name) VALUES ($1, $2)`, [
        event.data.keyId,
        event.data.name ?? '-',
      ]);
    else if (event.type === 'ApiKeyDeleted')
      await sql.execute(`DELETE FROM sync_maintenance.key_names WHERE key_id = $1`, [event.data.keyId]);
  },
});

const counted = async <T>(work: () => Promise<T>): Promise<{ statements: number; transactions: number }> => {
  const s0 = (await databaseStatements.get()).values[0]?.value ?? 0;
  const t0 = (await databaseTransactions.get()).values[0]?.value ?? 0;
  await work();
  return {
    statements: ((await databaseStatements.get()).values[0]?.value ?? 0) - s0,
    transactions: ((await databaseTransactions.get()).values[0]?.value ?? 0) - t0,
  };
};

describe('projections apply events in batches (PostgreSQL)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const batches = { calls: 0 };
  const keys = keysProjection(batches);
  const rows = () =>
    db.query<{ key_id: number; name: string | null }>(
      `SELECT key_id, name FROM sync_maintenance.keys ORDER BY key_id`,
    );
  const positions = () =>
    db.query<{ stream_id: string; position: number }>(
      `SELECT stream_id, position FROM sync_maintenance.projection_stream_positions WHERE projection = 'keys' ORDER BY stream_id`,
    );

  // The context's two projections over one subscription, as an app subscribes them.
  const sharedSubscription = () =>
    contextProjectionsSubscription(db, 'sync_maintenance', [keys, namesProjection], 'test', 'sync');

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, 'sync_maintenance', [
      eventStoreMigration,
      deadLettersMigration,
      {
        id: '0001-keys',
        up: (sql, s) =>
          sql
            .execute(`CREATE TABLE ${s}.keys (key_id INTEGER PRIMARY KEY CHECK (key_id <> 13), name TEXT)`)
            .then(() => sql.execute(`CREATE INDEX keys_by_name ON ${s}.keys (name)`))
            .then(() =>
              sql.execute(`CREATE TABLE ${s}.key_names (key_id INTEGER PRIMARY KEY, name TEXT NOT NULL)`),
            )
            .then(() => undefined),
      },
    ]);
    await runMigrations(db, 'identity', [eventStoreMigration, eventChainMigration]);
  });
  beforeEach(async () => {
    await db.execute(`DELETE FROM sync_maintenance.keys`);
    await db.execute(`DELETE FROM sync_maintenance.key_names`);
    await db.execute(`DELETE FROM sync_maintenance.projection_stream_positions`);
    await db.execute(`DELETE FROM sync_maintenance.projection_checkpoints`);
    await db.execute(`DELETE FROM sync_maintenance.dead_letters`);
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('applies a delivered batch in one go, and the same batch delivered twice changes nothing', async () => {
    const subscription = projectionSubscription(db, 'sync_maintenance', keys, 'test');
    const batch = deliveries([created(1), created(2), created(3, 1, 'three')]);
    const before = batches.calls;
    await subscription.handleBatch!(batch);
    expect(batches.calls).toBe(before + 1);
    await subscription.handleBatch!(deliveries([deleted(2, 2)], 3));
    const live = await rows();
    expect(live).toEqual([
      { key_id: 1, name: null },
      { key_id: 3, name: 'three' },
    ]);
    // Redelivered (a Kafka rebalance): every event is a duplicate, nothing is applied again.
    await subscription.handleBatch!(batch);
    await db.transaction((sql) =>
      applyProjectionBatch(
        sql,
        'sync_maintenance',
        keys,
        batch.map((d) => d.envelope),
      ),
    );
    expect(await rows()).toEqual(live);
    expect(await positions()).toEqual([
      { stream_id: 'api_key-1', position: 1 },
      { stream_id: 'api_key-2', position: 2 },
      { stream_id: 'api_key-3', position: 1 },
    ]);
    const [checkpoint] = await db.query<{ position: string }>(
      `SELECT position FROM sync_maintenance.projection_checkpoints WHERE projection = 'keys' AND source = 'identity.api_key:0'`,
    );
    expect(checkpoint?.position).toBe('3');
  });

  it('parks a failing event in the middle of a batch alone (and its stream behind it); the others are applied', async () => {
    const subscription = projectionSubscription(db, 'sync_maintenance', keys, 'test');
    const bad = created(13);
    const behind = deleted(13, 2);
    await subscription.handleBatch!(
      deliveries([created(11), bad, created(12, 1, 'twelve'), behind, created(14)]),
    );

    expect(await rows()).toEqual([
      { key_id: 11, name: null },
      { key_id: 12, name: 'twelve' },
      { key_id: 14, name: null },
    ]);
    const parked = await db.query<{ event_id: string; error: string; attempts: number }>(
      `SELECT event_id, error, attempts FROM sync_maintenance.dead_letters WHERE subscriber = 'keys' ORDER BY stream_position`,
    );
    expect(parked).toEqual([
      { event_id: bad.eventId, error: expect.stringContaining('check constraint'), attempts: 3 },
      { event_id: behind.eventId, error: 'behind a parked event of its stream', attempts: 0 },
    ]);
    expect((await positions()).map((p) => p.stream_id)).toEqual(['api_key-11', 'api_key-12', 'api_key-14']);

    // A later batch with an event of the parked stream parks it behind, and applies the rest.
    const later = created(13, 3);
    await subscription.handleBatch!(deliveries([created(15), later]));
    expect((await rows()).map((r) => r.key_id)).toEqual([11, 12, 14, 15]);
    const [again] = await db.query<{ error: string }>(
      `SELECT error FROM sync_maintenance.dead_letters WHERE event_id = $1`,
      [later.eventId],
    );
    expect(again?.error).toBe('behind a parked event of its stream');
  });

  it('passes over events of types it does not apply with one statement, and parks them behind a parked event of their stream', async () => {
    const subscription = projectionSubscription(db, 'sync_maintenance', keys, 'test');
    // A type of its streams that it does not apply: only its positions and checkpoint move.
    const used = (keyId: number, position: number) =>
      envelope(`api_key-${keyId}`, position, 'ApiKeyUsed', { keyId });
    const at = (offset: number) => ({ topic: 'identity.api_key', partition: 0, offset: String(offset) });
    const checkpoint = async () =>
      (
        await db.query<{ position: string }>(
          `SELECT position FROM sync_maintenance.projection_checkpoints WHERE projection = 'keys'`,
        )
      )[0]?.position;
    expect(await counted(() => subscription.handle(used(21, 1), at(0)))).toEqual({
      statements: 1,
      transactions: 0,
    });
    expect(
      await counted(() => subscription.handleBatch!(deliveries([used(21, 2), used(22, 1), used(22, 2)], 1))),
    ).toEqual({ statements: 1, transactions: 0 });
    expect(await positions()).toEqual([
      { stream_id: 'api_key-21', position: 2 },
      { stream_id: 'api_key-22', position: 2 },
    ]);
    expect(await checkpoint()).toBe('3');
    // Redelivered: no position and no checkpoint moves back.
    await subscription.handle(used(21, 1), at(0));
    await subscription.handleBatch!(deliveries([used(21, 1), used(22, 1)], 0));
    expect((await positions()).map((p) => p.position)).toEqual([2, 2]);
    expect(await checkpoint()).toBe('3');
    // Events it applies: the parked-event check, the position and the checkpoint are one statement (one
    // more for the batch's positions), then the apply and the change signal.
    expect(await counted(() => subscription.handle(created(31), at(4)))).toEqual({
      statements: 3,
      transactions: 1,
    });
    expect(await counted(() => subscription.handleBatch!(deliveries([created(32), created(33)], 5)))).toEqual(
      { statements: 4, transactions: 1 },
    );
    expect((await rows()).map((r) => r.key_id)).toEqual([31, 32, 33]);

    // Key 13 cannot be applied (the table's CHECK): parked; the stream's later events park behind it,
    // one alone or in a batch, while another stream's go on.
    await subscription.handle(created(13), at(7));
    await subscription.handle(used(13, 2), at(8));
    await subscription.handleBatch!(deliveries([used(13, 3), used(23, 1)], 9));
    const parked = await db.query<{ stream_position: number; error: string }>(
      `SELECT stream_position, error FROM sync_maintenance.dead_letters WHERE subscriber = 'keys' ORDER BY stream_position`,
    );
    expect(parked).toEqual([
      { stream_position: 1, error: expect.stringContaining('check constraint') },
      { stream_position: 2, error: 'behind a parked event of its stream' },
      { stream_position: 3, error: 'behind a parked event of its stream' },
    ]);
    expect((await positions()).map((p) => p.stream_id)).not.toContain('api_key-13');
    expect((await positions()).find((p) => p.stream_id === 'api_key-23')?.position).toBe(1);
  });

  it("applies a delivery to all of a context's projections in one transaction; one failing projection holds back no other", async () => {
    const subscription = sharedSubscription();
    const names = () =>
      db.query<{ key_id: number; name: string }>(
        `SELECT key_id, name FROM sync_maintenance.key_names ORDER BY key_id`,
      );
    const first = deliveries([created(51), created(52, 1, 'fifty-two')]);
    // One transaction: the claim (with the parked check), `keys`'s batch, `key_names`'s two applies (it has
    // no applyBatch), the positions and checkpoints of both, the read-model change signal (pg_notify).
    expect(await counted(() => subscription.handleBatch!(first))).toEqual({ statements: 6, transactions: 1 });
    expect(await rows()).toEqual([
      { key_id: 51, name: null },
      { key_id: 52, name: 'fifty-two' },
    ]);
    expect(await names()).toEqual([
      { key_id: 51, name: '-' },
      { key_id: 52, name: 'fifty-two' },
    ]);
    const checkpoints = await db.query<{ projection: string; position: string }>(
      `SELECT projection, position FROM sync_maintenance.projection_checkpoints ORDER BY projection`,
    );
    expect(checkpoints).toEqual([
      { projection: 'key_names', position: '1' },
      { projection: 'keys', position: '1' },
    ]);

    // Key 13 fails in `keys` (its CHECK): that projection parks it and its stream's next event alone; the
    // other read model gets every event, and both get the rest.
    const bad = created(13);
    const behind = deleted(13, 2);
    await subscription.handleBatch!(deliveries([created(53), bad, behind, created(54)], 2));
    expect((await rows()).map((r) => r.key_id)).toEqual([51, 52, 53, 54]);
    expect((await names()).map((r) => r.key_id)).toEqual([51, 52, 53, 54]);
    const parked = await db.query<{ subscriber: string; event_id: string; attempts: number }>(
      `SELECT subscriber, event_id, attempts FROM sync_maintenance.dead_letters ORDER BY stream_position`,
    );
    expect(parked).toEqual([
      { subscriber: 'keys', event_id: bad.eventId, attempts: 3 },
      { subscriber: 'keys', event_id: behind.eventId, attempts: 0 },
    ]);

    // A later delivery on the parked stream: `keys` parks it behind, `key_names` applies it with the rest.
    const later = created(13, 3, 'again');
    await subscription.handle(later, { topic: 'identity.api_key', partition: 0, offset: '6' });
    expect((await rows()).map((r) => r.key_id)).toEqual([51, 52, 53, 54]);
    expect(await names()).toContainEqual({ key_id: 13, name: 'again' });
    const [again] = await db.query<{ subscriber: string; error: string }>(
      `SELECT subscriber, error FROM sync_maintenance.dead_letters WHERE event_id = $1`,
      [later.eventId],
    );
    expect(again).toEqual({ subscriber: 'keys', error: 'behind a parked event of its stream' });

    // Delivered again: nothing changes in either read model.
    const keysBefore = await rows();
    const namesBefore = await names();
    await subscription.handleBatch!(first);
    expect(await rows()).toEqual(keysBefore);
    expect(await names()).toEqual(namesBefore);
  });

  it("passes a delivery none of a context's projections applies over with one statement for all of them; a parked stream parks behind for its projection only", async () => {
    const subscription = sharedSubscription();
    const used = (keyId: number, position: number) =>
      envelope(`api_key-${keyId}`, position, 'ApiKeyUsed', { keyId });
    const state = () =>
      Promise.all([
        db.query<{ projection: string; stream_id: string; position: number }>(
          `SELECT projection, stream_id, position FROM sync_maintenance.projection_stream_positions ORDER BY projection, stream_id`,
        ),
        db.query<{ projection: string; position: string }>(
          `SELECT projection, position FROM sync_maintenance.projection_checkpoints ORDER BY projection`,
        ),
      ]);
    expect(
      await counted(() => subscription.handleBatch!(deliveries([used(61, 1), used(62, 1), used(61, 2)]))),
    ).toEqual({ statements: 1, transactions: 0 });
    const moved = [
      [
        { projection: 'key_names', stream_id: 'api_key-61', position: 2 },
        { projection: 'key_names', stream_id: 'api_key-62', position: 1 },
        { projection: 'keys', stream_id: 'api_key-61', position: 2 },
        { projection: 'keys', stream_id: 'api_key-62', position: 1 },
      ],
      [
        { projection: 'key_names', position: '2' },
        { projection: 'keys', position: '2' },
      ],
    ];
    expect(await state()).toEqual(moved);
    // Redelivered: no position and no checkpoint moves back.
    await subscription.handleBatch!(deliveries([used(61, 1), used(62, 1)]));
    expect(await state()).toEqual(moved);

    // Key 13 is parked in `keys` (its CHECK): a later event of its stream that neither applies is parked behind
    // for `keys`, and only moves `key_names`'s position.
    await subscription.handle(created(13), { topic: 'identity.api_key', partition: 0, offset: '3' });
    const behind = used(13, 2);
    await subscription.handle(behind, { topic: 'identity.api_key', partition: 0, offset: '4' });
    const parked = await db.query<{ subscriber: string; event_id: string; error: string }>(
      `SELECT subscriber, event_id, error FROM sync_maintenance.dead_letters ORDER BY stream_position`,
    );
    expect(parked).toEqual([
      {
        subscriber: 'keys',
        event_id: expect.any(String),
        error: expect.stringContaining('check constraint'),
      },
      { subscriber: 'keys', event_id: behind.eventId, error: 'behind a parked event of its stream' },
    ]);
    const [positions] = await state();
    expect(positions.filter((p) => p.stream_id === 'api_key-13')).toEqual([
      { projection: 'key_names', stream_id: 'api_key-13', position: 2 },
    ]);
  });

  it('rebuilds in chunks (several transactions into scratch tables swapped in) to the rows of the live projection', async () => {
    const store = new EventStore('identity', 'identity');
    const append = (streamId: string, version: number, events: DomainEvent[]) =>
      db.transaction((sql) => store.append(sql, streamId, version, events, metadata, new Date(AT)));
    const live = keysProjection({ calls: 0 });
    for (let k = 21; k <= 40; k += 1) {
      const [event] = await append(`api_key-${k}`, 0, [
        { type: 'ApiKeyCreated', data: keyData(k, `key ${k}`) } as DomainEvent,
      ]);
      await db.transaction((sql) => applyProjectionBatch(sql, 'sync_maintenance', live, [event!]));
    }
    for (const k of [22, 25, 31]) {
      const [event] = await append(`api_key-${k}`, 1, [
        { type: 'ApiKeyDeleted', data: { keyId: k, deletedAt: AT } } as DomainEvent,
      ]);
      await db.transaction((sql) => applyProjectionBatch(sql, 'sync_maintenance', live, [event!]));
    }
    const expected = await rows();
    expect(expected).toHaveLength(17);
    const expectedPositions = await positions();
    const transactions = batches.calls;

    // Pages of 4 events: 23 events in 6 page transactions, then the swap.
    expect(await rebuildInChunks(db, 'sync_maintenance', keys, 4)).toBe(23);
    expect(batches.calls - transactions).toBe(6);
    expect(await rows()).toEqual(expected);
    expect(await positions()).toEqual(expectedPositions);
    const scratch = await db.query(`SELECT to_regclass('sync_maintenance.keys__rebuild') AS t`);
    expect(scratch).toEqual([{ t: null }]);
    // The rebuilt table took the live one's place under the same names (constraints and indexes).
    const names = await db.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint WHERE conrelid = 'sync_maintenance.keys'::regclass
       UNION SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'sync_maintenance.keys'::regclass
       ORDER BY 1`,
    );
    expect(names.map((n) => n.name)).toEqual([
      'keys_key_id_check',
      'keys_pkey',
      'sync_maintenance.keys_by_name',
      'sync_maintenance.keys_pkey',
    ]);
    // Rebuilt again: the same rows (a rebuild is a pure function of the events).
    await rebuildInChunks(db, 'sync_maintenance', keys, 4);
    expect(await rows()).toEqual(expected);
  });
});
