import type { ApiKeyEvent, CreditExhausted, EventEnvelope } from '@rigmarket/contracts';
import { Database } from './database';
import { deadLettersMigration, parkedEvents } from './dead-letters';
import { eventStoreMigration, runMigrations } from './migrations';
import { defineProjection, projectionSubscription } from './projections';
import { type Reactor, ReactorWorker, reactorQueueMigration } from './reactors';

const delivery = { topic: 't', partition: 0, offset: '0' };
let seq = 0;
const envelope = (
  context: EventEnvelope['context'],
  streamId: string,
  streamPosition: number,
  type: string,
  data: unknown,
): EventEnvelope => ({
  eventId: `e${(seq += 1)}`,
  type,
  schemaVersion: context === 'marketplace' ? 2 : 1,
  streamId,
  streamType: streamId.split('-')[0]!,
  streamPosition,
  globalPosition: String(seq),
  occurredAt: '2026-05-01T12:00:00.000Z',
  context,
  data,
  metadata: { correlationId: 'c', causationId: 'c' },
});
const key = (keyId: number, keyHash: string) => ({
  keyId,
  userId: 2,
  name: null,
  keyHash,
  permissions: null,
  kind: 'api',
  createdAt: '2026-05-01T12:00:00.000Z',
});
const GOOD_HASH = 'a'.repeat(64);

describe('inbound events are checked against their public schema before they are applied', () => {
  let db: Database;
  const reacted: number[] = [];
  const keys = defineProjection<ApiKeyEvent>({
    name: 'keys',
    version: 1,
    sources: [{ context: 'identity', streamType: 'api_key' }],
    tables: ['sync_maintenance.keys'],
    eventTypes: ['ApiKeyCreated', 'ApiKeyDeleted'],
    async apply(sql, event) {
      if (event.type === 'ApiKeyCreated')
        await sql.execute(`INSERT INTO sync_maintenance.keys VALUES ($1)`, [event.data.keyId]);
    },
  });
  const stopper: Reactor<CreditExhausted> = {
    name: 'stopper',
    sources: [{ context: 'marketplace', streamType: 'ledger' }],
    eventTypes: ['CreditExhausted'],
    async react(event) {
      reacted.push(event.data.userId);
    },
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, 'sync_maintenance', [
      eventStoreMigration,
      deadLettersMigration,
      reactorQueueMigration,
      {
        id: '0001-keys',
        up: (sql, s) => sql.execute(`CREATE TABLE ${s}.keys (key_id INTEGER)`).then(() => undefined),
      },
    ]);
  });
  afterAll(async () => {
    await db.close();
  });

  it('parks an invalid event of a projection with the reason, and the later events of its stream behind it', async () => {
    const subscription = projectionSubscription(db, 'sync_maintenance', keys, 'test');
    await subscription.handle(
      envelope('identity', 'api_key-1', 1, 'ApiKeyCreated', key(1, GOOD_HASH)),
      delivery,
    );
    const bad = envelope('identity', 'api_key-2', 1, 'ApiKeyCreated', key(2, 'not-a-hash'));
    await subscription.handle(bad, delivery);
    await subscription.handle(
      envelope('identity', 'api_key-2', 2, 'ApiKeyDeleted', {
        keyId: 2,
        deletedAt: '2026-05-01T12:00:00.000Z',
      }),
      delivery,
    );

    expect(await db.query(`SELECT key_id FROM sync_maintenance.keys`)).toEqual([{ key_id: 1 }]);
    const parked = await db.query<{ event_id: string; error: string }>(
      `SELECT event_id, error FROM sync_maintenance.dead_letters WHERE subscriber = 'keys' ORDER BY stream_position`,
    );
    expect(parked).toEqual([
      {
        event_id: bad.eventId,
        error: `invalid identity event ApiKeyCreated v1 (${bad.eventId}): keyHash: a hex sha256`,
      },
      { event_id: expect.any(String), error: 'behind a parked event of its stream' },
    ]);
  });

  it('parks an invalid event of a reactor in its queue without running it', async () => {
    const worker = new ReactorWorker(db, 'sync_maintenance', [stopper], { pollIntervalMs: 20 });
    const [subscription] = worker.subscriptions('test');
    const bad = envelope('marketplace', 'ledger-3', 1, 'CreditExhausted', {
      userId: 3,
      balanceMicros: 0.5,
      at: 'x',
    });
    await subscription!.handle(bad, delivery);
    await subscription!.handle(
      envelope('marketplace', 'ledger-4', 1, 'CreditExhausted', { userId: 4, balanceMicros: 0, at: 'x' }),
      delivery,
    );
    worker.start();
    for (let i = 0; i < 100 && reacted.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    await worker.stop();

    expect(reacted).toEqual([4]);
    const summary = await parkedEvents(db, ['sync_maintenance']);
    expect(summary).toContainEqual({
      schema: 'sync_maintenance',
      subscriber: 'reactor:stopper',
      parked: 1,
      lastError: `invalid marketplace event CreditExhausted v2 (${bad.eventId}): balanceMicros: Invalid input: expected int, received number`,
    });
  });
});
