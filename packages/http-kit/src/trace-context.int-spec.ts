import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type DomainEvent, topicFor } from '@rigmarket/contracts';
import {
  CommandRunner,
  Database,
  EventStore,
  OutboxRelay,
  type Projection,
  deadLettersMigration,
  eventChainMigration,
  eventStoreMigration,
  projectionSubscription,
  runMigrations,
  systemClock,
} from '@rigmarket/event-sourcing';
import { KafkaTransport } from '@rigmarket/messaging';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { Kafka } from 'kafkajs';
import { startTracing, stopTracing } from './tracing';

/**
 * The trace context crosses Kafka (docs/operations.md, Traces): a command run in a request's span stores
 * the span's context with its outbox row; the relay publishes it in a PRODUCER span whose context the Kafka
 * message carries in its `traceparent` header (not in the value); the consuming projection's span, on the
 * other side of the broker, is in the same trace, a child of the publish. Real PostgreSQL and Kafka, the
 * SDK started by startTracing with an in-memory exporter.
 */
const keyCreated: DomainEvent = {
  type: 'ApiKeyCreated',
  data: {
    keyId: 7,
    userId: 1,
    name: null,
    keyHash: '7'.padStart(64, '0'),
    permissions: null,
    kind: 'api',
    createdAt: '2026-01-01T00:00:00Z',
  },
};

describe('trace context across the outbox and Kafka', () => {
  const exporter = new InMemorySpanExporter();
  const namespace = `${uniqueName('trace')}.`;
  const brokers = () => requiredEnv('KAFKA_BROKERS').split(',');
  let db: Database;
  let drop: () => Promise<void>;
  const transports: KafkaTransport[] = [];

  beforeAll(async () => {
    await startTracing({ serviceName: 'trace-test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, 'identity', [
      eventStoreMigration,
      deadLettersMigration,
      eventChainMigration,
      {
        id: '0002-seen',
        up: (sql, s) => sql.execute(`CREATE TABLE ${s}.seen (stream_id TEXT)`).then(() => undefined),
      },
    ]);
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await db?.close();
    await drop?.();
    await stopTracing();
  });

  it("a request's trace id reaches the consumer's span after the Kafka hop, through the message header", async () => {
    const kafka = (clientId: string) => {
      const transport = new KafkaTransport({ brokers: brokers(), clientId, namespace });
      transports.push(transport);
      return transport;
    };
    const producerSide = kafka('trace-producer');
    const consumerSide = kafka('trace-consumer');
    const topic = topicFor('identity', 'api_key');
    await producerSide.ensureTopics([topic]);
    const seen: Projection = {
      name: 'seen',
      version: 1,
      sources: [{ context: 'identity', streamType: 'api_key' }],
      tables: ['identity.seen'],
      eventTypes: ['ApiKeyCreated'],
      apply: (sql, e) =>
        sql.execute(`INSERT INTO identity.seen VALUES ($1)`, [e.streamId]).then(() => undefined),
    };
    await consumerSide.subscribe(projectionSubscription(db, 'identity', seen, 'trace-test'));

    // The request: a span around the command, as the HTTP instrumentation makes one around a route.
    const runner = new CommandRunner(db, new EventStore('identity', 'identity'), [], systemClock);
    const traceId = await trace.getTracer('test').startActiveSpan('PUT /api/v0/test', async (span) => {
      await runner.handle(
        'api_key-7',
        { initialState: () => null, evolve: (state: null) => state },
        () => [keyCreated],
        { correlationId: 'c', causationId: 'c' },
      );
      span.end();
      return span.spanContext().traceId;
    });
    const [row] = await db.query<{ traceparent: string | null }>(
      `SELECT envelope->>'traceparent' AS traceparent FROM identity.outbox`,
    );
    expect(row?.traceparent).toContain(traceId);

    const relay = new OutboxRelay(db, 'identity', producerSide);
    expect(await relay.flush()).toBe(1);
    await relay.stop();

    // What crossed the broker: the trace context in the header, the value as stored without it.
    const raw = new Kafka({ clientId: 'trace-raw', brokers: brokers(), logLevel: 0 }).consumer({
      groupId: `${namespace}raw`,
    });
    await raw.connect();
    const message = await new Promise<{ headers: Record<string, string>; value: string }>((resolve) => {
      void raw.subscribe({ topic: namespace + topic, fromBeginning: true }).then(() =>
        raw.run({
          eachMessage: async ({ message: m }) =>
            resolve({
              headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)])),
              value: m.value?.toString() ?? '',
            }),
        }),
      );
    });
    await raw.disconnect();
    expect(message.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(message.value).not.toContain('traceparent');

    const spans = await eventually(
      async () => {
        const found = exporter.getFinishedSpans();
        return found.some((s) => s.name === 'identity/seen') ? found : undefined;
      },
      30_000,
      "the consumer's span",
    );
    const named = (name: string): ReadableSpan => {
      const span = spans.find((s) => s.name === name && s.spanContext().traceId === traceId);
      expect({ name, found: span !== undefined }).toEqual({ name, found: true });
      return span!;
    };
    const command = named('command api_key');
    const publish = named(`publish ${topic}`);
    const consume = named('identity/seen');
    expect(publish.parentSpanContext?.spanId).toBe(command.spanContext().spanId);
    expect(message.headers.traceparent).toContain(publish.spanContext().spanId);
    expect(consume.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(await db.query(`SELECT stream_id FROM identity.seen`)).toEqual([{ stream_id: 'api_key-7' }]);
  });

  it('keeps a key sent in the query string out of the HTTP span (an app process, compiled)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(__dirname, '../test-fixtures/traced-server.js'),
      '/api/v0/instances/?api_key=s3cret-key-value&owner=me',
    ]);
    const spans = JSON.parse(stdout) as Array<{ kind: number; attributes: Record<string, unknown> }>;
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(JSON.stringify(server?.attributes)).toContain('owner=me');
    expect(stdout).not.toContain('s3cret');
  });
});
