import { eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { kafkaClient } from './kafka-client';
import { KafkaTransport } from './kafka.transport';
import { machinesTopic as topic, streamEvent } from './testing/stream-events';

/**
 * A consumer commits the offsets it handled at most once per commit interval (a commit is a broker round
 * trip per consumer per delivery otherwise), and commits what it handled when its transport closes: a
 * process stopped cleanly and started again reads nothing twice.
 */
describe('offset commits of a Kafka consumer', () => {
  const namespace = `${uniqueName('commits')}.`;
  const brokers = requiredEnv('KAFKA_BROKERS').split(',');
  const transports: KafkaTransport[] = [];
  const transport = (commitIntervalMs?: number) => {
    const t = new KafkaTransport({ brokers, clientId: 'commits-test', namespace, commitIntervalMs });
    transports.push(t);
    return t;
  };
  const producer = transport();
  const admin = kafkaClient({ brokers, clientId: 'commits-admin' }).admin();
  const committed = async (groupId: string): Promise<number[]> => {
    const [offsets] = await admin.fetchOffsets({ groupId: namespace + groupId, topics: [namespace + topic] });
    return offsets!.partitions.map((p) => Number(p.offset)).filter((o) => o >= 0);
  };
  const publish = (position: number) =>
    producer.publish([{ topic, key: 'machine-1', envelope: streamEvent(topic, position) }]);
  /** Subscribes a group on a new transport; answers the stream positions it is handed. */
  const consume = async (groupId: string, commitIntervalMs: number) => {
    const got: number[] = [];
    const consumer = transport(commitIntervalMs);
    await consumer.subscribe({
      groupId,
      topics: [topic],
      handle: async (envelope) => {
        got.push(envelope.streamPosition);
      },
    });
    return { consumer, got };
  };

  beforeAll(async () => {
    await admin.connect();
    await producer.ensureTopics([topic]);
  });
  afterAll(async () => {
    for (const t of transports) await t.close();
    await admin.disconnect();
  });

  it('holds commits back within the interval, commits them on close, and a restart reads nothing again', async () => {
    await publish(1);
    const first = await consume('slow', 60_000);
    await eventually(async () => (first.got.length === 1 ? true : undefined), 30_000, 'the first event');
    // The first delivery after a quiet interval commits at once.
    await eventually(
      async () => ((await committed('slow'))[0] === 1 ? true : undefined),
      10_000,
      'its commit',
    );

    await publish(2);
    await publish(3);
    await eventually(async () => (first.got.length === 3 ? true : undefined), 30_000, 'two more events');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await committed('slow')).toEqual([1]);

    await first.consumer.close();
    expect(await committed('slow')).toEqual([3]);

    await publish(4);
    const again = await consume('slow', 60_000);
    await eventually(async () => (again.got.length > 0 ? true : undefined), 30_000, 'the new event');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(again.got).toEqual([4]);
    expect(first.got).toEqual([1, 2, 3]);
  }, 90_000);

  it("commits a quiet consumer's offsets once the interval has passed", async () => {
    // A new group reads the four events from the beginning, one delivery each: the first commits at once,
    // the other three only at the end of the interval (no delivery comes after them to commit them).
    const { got } = await consume('quick', 300);
    await eventually(async () => (got.length === 4 ? true : undefined), 30_000, 'the four events');
    await eventually(
      async () => ((await committed('quick'))[0] === 4 ? true : undefined),
      5_000,
      'the commit at the end of the interval',
    );
  }, 60_000);
});
