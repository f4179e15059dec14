import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type DomainEvent, topicFor } from '@rigmarket/contracts';
import {
  Database,
  EventStore,
  OutboxRelay,
  type Projection,
  deadLettersMigration,
  eventChainMigration,
  eventStoreMigration,
  projectionSubscription,
  runMigrations,
} from '@rigmarket/event-sourcing';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { KafkaTransport } from './kafka.transport';

const keyCreated: DomainEvent = {
  type: 'ApiKeyCreated',
  data: {
    keyId: 42,
    userId: 1,
    name: null,
    keyHash: '42'.padStart(64, '0'),
    permissions: null,
    kind: 'api',
    createdAt: '2026-01-01T00:00:00Z',
  },
};

describe('outbox relay over Apache Kafka', () => {
  let db: Database;
  let url: string;
  let drop: () => Promise<void>;
  let consumerSide: KafkaTransport;
  const namespace = `${uniqueName('crash')}.`;
  const brokers = () => requiredEnv('KAFKA_BROKERS');

  beforeAll(async () => {
    const database = await createTestDatabase();
    ({ url, drop } = database);
    db = await Database.connect({ kind: 'postgres', url });
    await runMigrations(db, 'identity', [
      eventStoreMigration,
      deadLettersMigration,
      eventChainMigration,
      {
        id: '0002-seen',
        up: (sql, s) =>
          sql.execute(`CREATE TABLE ${s}.seen (stream_id TEXT, applied INTEGER)`).then(() => undefined),
      },
    ]);
    consumerSide = new KafkaTransport({
      brokers: brokers().split(','),
      clientId: 'crash-consumer',
      namespace,
    });
    await consumerSide.ensureTopics([topicFor('identity', 'api_key')]);
  });
  afterAll(async () => {
    await consumerSide.close();
    await db.close();
    await drop();
  });

  it('survives a relay killed between the broker ack and marking the row: the event arrives, and is applied once', async () => {
    const store = new EventStore('identity', 'identity');
    await db.transaction((sql) =>
      store.append(sql, 'api_key-42', 0, [keyCreated], { correlationId: 'c', causationId: 'c' }, new Date()),
    );

    const deliveries: string[] = [];
    const seen: Projection = {
      name: 'seen',
      version: 1,
      sources: [{ context: 'identity', streamType: 'api_key' }],
      tables: ['identity.seen'],
      eventTypes: ['ApiKeyCreated'],
      apply: (sql, e) =>
        sql.execute(`INSERT INTO identity.seen VALUES ($1, 1)`, [e.streamId]).then(() => undefined),
    };
    const subscription = projectionSubscription(db, 'identity', seen, 'crash-test');
    await consumerSide.subscribe({
      ...subscription,
      handle: async (envelope, delivery) => {
        deliveries.push(envelope.eventId);
        await subscription.handle(envelope, delivery);
      },
    });

    const child = spawn(
      process.execPath,
      [join(__dirname, '../test-fixtures/crashing-relay.js'), url, brokers(), namespace, 'identity'],
      {
        stdio: 'inherit',
      },
    );
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, sig) => resolve(sig)),
    );
    expect(signal).toBe('SIGKILL');
    // The broker has the event, the outbox still says unpublished.
    expect(await db.query(`SELECT published_at FROM identity.outbox`)).toEqual([{ published_at: null }]);

    const relay = new OutboxRelay(
      db,
      'identity',
      new KafkaTransport({ brokers: brokers().split(','), clientId: 'relay-2', namespace }),
      {
        leaseMs: 1000,
      },
    );
    await eventually(
      async () => ((await relay.flush()) > 0 ? true : undefined),
      10_000,
      'the restarted relay to take over the lease',
    );
    await relay.stop();

    await eventually(async () => (deliveries.length >= 2 ? true : undefined), 20_000, 'both deliveries');
    expect(new Set(deliveries).size).toBe(1);
    expect(await db.query(`SELECT stream_id, applied FROM identity.seen`)).toEqual([
      { stream_id: 'api_key-42', applied: 1 },
    ]);
    const [row] = await db.query<{ published: boolean }>(
      `SELECT published_at IS NOT NULL AS published FROM identity.outbox`,
    );
    expect(row?.published).toBe(true);
  });
});
