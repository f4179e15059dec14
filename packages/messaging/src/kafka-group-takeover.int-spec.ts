import type { Delivery, Subscription } from '@rigmarket/event-sourcing';
import { eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import { kafkaClient } from './kafka-client';
import { KafkaTransport } from './kafka.transport';
import {
  instancesTopic as instances,
  machinesTopic as machines,
  streamEvent as event,
} from './testing/stream-events';

/**
 * A context's projections once had a consumer group each; now they share one (`Subscription.replaces`). Its
 * first start must not read the topics again from the beginning: it starts where the groups it replaces left
 * off, at the lowest offset any of them committed on each partition.
 */
describe('a consumer group that replaces others (Kafka)', () => {
  const namespace = `${uniqueName('takeover')}.`;
  const brokers = requiredEnv('KAFKA_BROKERS').split(',');
  const transports: KafkaTransport[] = [];
  const transport = () => {
    const t = new KafkaTransport({ brokers, clientId: 'takeover-test', namespace });
    transports.push(t);
    return t;
  };
  const admin = kafkaClient({ brokers, clientId: 'takeover-admin' }).admin();
  /** The committed offset of a group on a topic's partitions (the events are on one of them). */
  const committed = async (groupId: string, topic: string): Promise<number[]> => {
    const [offsets] = await admin.fetchOffsets({ groupId: namespace + groupId, topics: [namespace + topic] });
    return offsets!.partitions.map((p) => Number(p.offset)).filter((o) => o >= 0);
  };
  /** Sets a group's committed offset on the partition that holds the topic's stream. */
  const commit = async (groupId: string, topic: string, offset: number) => {
    const ends = await admin.fetchTopicOffsets(namespace + topic);
    const partition = ends.find((p) => Number(p.high) > 0)!.partition;
    await admin.setOffsets({
      groupId: namespace + groupId,
      topic: namespace + topic,
      partitions: [{ partition, offset: String(offset) }],
    });
  };
  const subscribe = async (subscription: Omit<Subscription, 'handle'>): Promise<Delivery[]> => {
    const got: Delivery[] = [];
    await transport().subscribe({
      ...subscription,
      handle: async (envelope, delivery) => {
        got.push({ envelope, delivery });
      },
      handleBatch: async (deliveries) => {
        got.push(...deliveries);
      },
    });
    return got;
  };
  const positions = (got: readonly Delivery[], topic: string) =>
    got.filter((d) => d.delivery.topic === topic).map((d) => d.envelope.streamPosition);

  beforeAll(async () => {
    await admin.connect();
    const producer = transport();
    await producer.ensureTopics([machines, instances]);
    await producer.publish(
      [1, 2, 3, 4, 5, 6].map((p) => ({ topic: machines, key: 'machine-1', envelope: event(machines, p) })),
    );
    await producer.publish(
      [1, 2, 3].map((p) => ({ topic: instances, key: 'instance-1', envelope: event(instances, p) })),
    );
  });
  afterAll(async () => {
    for (const t of transports) await t.close();
    await admin.disconnect();
  });

  it('starts at the lowest offset the replaced groups committed, and at the beginning where one committed none', async () => {
    await commit('old.a', machines, 4); // read up to the 4th event
    await commit('old.b', machines, 2); // read up to the 2nd: the 3rd is where the new group starts
    // old.c reads the instance topic and never committed: the new group reads it from the beginning.
    const got = await subscribe({
      groupId: 'shared',
      topics: [machines, instances],
      replaces: [
        { groupId: 'old.a', topics: [machines] },
        { groupId: 'old.b', topics: [machines] },
        { groupId: 'old.c', topics: [instances] },
      ],
    });
    await eventually(
      async () =>
        (positions(got, machines).length >= 4 && positions(got, instances).length >= 3) || undefined,
      30_000,
      'the shared group to read both topics',
    );
    expect(positions(got, machines)).toEqual([3, 4, 5, 6]);
    expect(positions(got, instances)).toEqual([1, 2, 3]);
    await eventually(
      async () => ((await committed('shared', machines))[0] === 6 ? true : undefined),
      10_000,
      "the shared group's commit",
    );
  }, 60_000);

  it('a group with committed offsets of its own resumes from them (the replaced groups are not read again)', async () => {
    for (const t of transports.splice(1)) await t.close();
    await commit('old.b', machines, 0);
    const got = await subscribe({
      groupId: 'shared',
      topics: [machines, instances],
      replaces: [{ groupId: 'old.b', topics: [machines] }],
    });
    await transports[0]!.publish([{ topic: machines, key: 'machine-1', envelope: event(machines, 7) }]);
    await eventually(async () => positions(got, machines).length >= 1 || undefined, 30_000, 'the new event');
    expect(positions(got, machines)).toEqual([7]);
    expect(positions(got, instances)).toEqual([]);
  }, 60_000);
});
