import { randomUUID } from 'node:crypto';
import { type EventEnvelope, type MachineRegistered, topicFor } from '@rigmarket/contracts';
import {
  Database,
  coreMigrations,
  defineProjection,
  rebuildProjection,
  runMigrations,
} from '@rigmarket/event-sourcing';
import { createTestDatabase, requiredEnv, uniqueName } from '@rigmarket/testing';
import { KafkaEventSource } from './kafka-event-source';
import { KafkaTransport } from './kafka.transport';

const owners = defineProjection<MachineRegistered>({
  name: 'owners',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: ['sync_maintenance.owners'],
  eventTypes: ['MachineRegistered'],
  async apply(sql, event) {
    await sql.execute(`INSERT INTO sync_maintenance.owners VALUES ($1, $2)`, [
      event.data.machineId,
      event.data.ownerId,
    ]);
  },
});

const registered = (machineId: number, ownerId: number, position = 1): EventEnvelope => ({
  eventId: randomUUID(),
  type: 'MachineRegistered',
  schemaVersion: 1,
  streamId: `machine-${machineId}`,
  streamType: 'machine',
  streamPosition: position,
  globalPosition: String(machineId),
  occurredAt: '2026-05-01T12:00:00.000Z',
  context: 'marketplace',
  data: { machineId, ownerId },
  metadata: { correlationId: 'c', causationId: 'c' },
});

/**
 * A context whose database holds no other context's events (separate databases) rebuilds a subscribed
 * read model from the owning context's Kafka topic.
 */
describe('rebuilding from Kafka topics (KafkaEventSource)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let transport: KafkaTransport;
  const namespace = `${uniqueName('replay')}.`;
  const source = () =>
    new KafkaEventSource({
      brokers: requiredEnv('KAFKA_BROKERS').split(','),
      clientId: 'replay-test',
      namespace,
    });

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, 'sync_maintenance', [
      ...coreMigrations,
      {
        id: '0001-owners',
        up: (sql, s) =>
          sql
            .execute(`CREATE TABLE ${s}.owners (machine_id INTEGER, owner_id INTEGER)`)
            .then(() => undefined),
      },
    ]);
    transport = new KafkaTransport({
      brokers: requiredEnv('KAFKA_BROKERS').split(','),
      clientId: 'replay-test',
      namespace,
    });
    await transport.ensureTopics([topicFor('marketplace', 'machine')]);
  }, 60_000);
  afterAll(async () => {
    await transport?.close();
    await db?.close();
    await drop?.();
  });

  it('replays every event of the topic into the read model, the same rows each time, with no marketplace tables here', async () => {
    const topic = topicFor('marketplace', 'machine');
    const events = [registered(1, 10), registered(2, 20), registered(3, 30), registered(4, 40)];
    await transport.publish(events.map((envelope) => ({ topic, key: envelope.streamId, envelope })));
    // A machine event of another type on the same stream is not the projection's: skipped.
    await transport.publish([
      {
        topic,
        key: 'machine-1',
        envelope: {
          ...registered(1, 10, 2),
          type: 'MachineUnlisted',
          data: { machineId: 1, unlistedAt: 'x' },
        },
      },
    ]);
    const rows = () => db.query(`SELECT machine_id, owner_id FROM sync_maintenance.owners ORDER BY 1`);
    const expected = [
      { machine_id: 1, owner_id: 10 },
      { machine_id: 2, owner_id: 20 },
      { machine_id: 3, owner_id: 30 },
      { machine_id: 4, owner_id: 40 },
    ];

    // The store source finds nothing: this database has no marketplace.events.
    expect(await rebuildProjection(db, 'sync_maintenance', owners)).toBe(0);
    expect(await rows()).toEqual([]);

    expect(await rebuildProjection(db, 'sync_maintenance', owners, source)).toBe(5);
    expect(await rows()).toEqual(expected);
    expect(await rebuildProjection(db, 'sync_maintenance', owners, source)).toBe(5);
    expect(await rows()).toEqual(expected);
    const [checkpoint] = await db.query<{ source: string; position: string }>(
      `SELECT source, position FROM sync_maintenance.projection_checkpoints WHERE projection = 'owners'`,
    );
    expect(checkpoint?.source).toBe('kafka:marketplace');
    expect(checkpoint?.position).toMatch(/machine\.v1:0@\d+/);
  }, 90_000);
});
