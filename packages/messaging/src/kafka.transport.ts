import { type EventEnvelope, allTopics, deadLetterTopicFor } from '@rigmarket/contracts';
import type { Delivery, OutgoingMessage, Subscription, Transport } from '@rigmarket/event-sourcing';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { kafkaClient } from './kafka-client';

/** The most messages of one fetched batch handed to a subscription's handleBatch at once. */
export const KAFKA_HANDLE_BATCH = 500;

export interface KafkaTransportOptions {
  brokers: string[];
  clientId: string;
  /** Tries per message before it goes to the topic's dead-letter topic. */
  maxAttempts?: number;
  /**
   * How long the broker holds a fetch that finds no new data (default 1,000 ms). It does not delay delivery:
   * with minBytes 1 a fetch returns as soon as a message arrives. It sets how often an idle consumer asks
   * again: there is one consumer per app for its projections and one per reactor.
   */
  maxWaitTimeMs?: number;
  sessionTimeoutMs?: number;
  /**
   * How long a consumer may keep handled offsets uncommitted (default 1,000 ms; 0: a commit after every
   * handled group). A commit is a request to the broker, which also writes it to its offsets log: with eight
   * consumers reading one topic, committing after each delivery was a round trip per consumer per event.
   * After a crash, up to this much is delivered again, which consumers skip (projections by stream position,
   * reactors by event id). A stopping transport commits what it handled first.
   */
  commitIntervalMs?: number;
  logger?: (level: string, message: string) => void;
  /** Prefix of every topic and consumer group, so test runs (or tenants) sharing a broker stay apart. */
  namespace?: string;
}

/**
 * Apache Kafka through kafkajs: topic per aggregate type, key = stream id (one partition keeps a
 * stream's order), idempotent producer with acks from all in-sync replicas.
 *
 * Consumers are a small runner of our own rather than Nest's Kafka transport: eachBatch with manual
 * offset resolution and commits after the handler's transaction committed, heartbeats between
 * messages, and a dead-letter topic so one poison message cannot block a partition forever.
 */
export class KafkaTransport implements Transport {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private producer: Producer | undefined;
  private readonly consumers: { consumer: Consumer; commits: OffsetCommits }[] = [];

  private readonly ns: string;

  constructor(private readonly options: KafkaTransportOptions) {
    this.ns = options.namespace ?? '';
    this.kafka = kafkaClient(options);
  }

  /** Creates every topic of packages/contracts and their dead-letter topics (idempotent). */
  async ensureTopics(topics: readonly string[] = allTopics()): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const wanted = topics
        .flatMap((t) => [this.ns + t, this.ns + deadLetterTopicFor(t)])
        .filter((t) => !existing.has(t));
      if (wanted.length > 0) {
        await admin.createTopics({
          waitForLeaders: true,
          topics: wanted.map((topic) => ({
            topic,
            numPartitions: 3,
            configEntries: [{ name: 'retention.ms', value: '-1' }],
          })),
        });
      }
    } finally {
      await admin.disconnect();
    }
  }

  private async getProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
      });
      await producer.connect();
      this.producer = producer;
    }
    return this.producer;
  }

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = await this.getProducer();
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const m of messages) byTopic.set(m.topic, [...(byTopic.get(m.topic) ?? []), m]);
    await this.send(producer, byTopic).catch(async (error: unknown) => {
      // A failed send may leave an idempotent producer unusable (its sequence numbers or producer id lost
      // when a broker died): the next publish starts a fresh one. The relay sends the rows again, and
      // consumers skip an event id they already have.
      if (this.producer === producer) this.producer = undefined;
      await producer.disconnect().catch(() => undefined);
      throw error;
    });
  }

  private async send(producer: Producer, byTopic: Map<string, OutgoingMessage[]>): Promise<void> {
    await producer.sendBatch({
      acks: -1,
      // No `compression`: uncompressed, kafkajs's default (CompressionTypes.None).
      topicMessages: [...byTopic].map(([topic, list]) => ({
        topic: this.ns + topic,
        messages: list.map(({ key, envelope: { traceparent, ...envelope } }) => ({
          key,
          // The trace context travels in the W3C `traceparent` header, not in the value (which stays the
          // event as stored: a rebuild from the topics reads it).
          value: JSON.stringify(envelope),
          headers: {
            eventId: envelope.eventId,
            type: envelope.type,
            schemaVersion: String(envelope.schemaVersion),
            correlationId: envelope.metadata.correlationId,
            causationId: envelope.metadata.causationId,
            ...(traceparent ? { traceparent } : {}),
          },
        })),
      })),
    });
  }

  async subscribe(subscription: Subscription): Promise<void> {
    if (subscription.replaces?.length) await this.takeOver(subscription);
    const consumer = this.kafka.consumer({
      groupId: this.ns + subscription.groupId,
      sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 1_000,
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    await consumer.subscribe({ topics: subscription.topics.map((t) => this.ns + t), fromBeginning: true });
    const maxAttempts = this.options.maxAttempts ?? 5;
    const commits = new OffsetCommits(consumer, this.options.commitIntervalMs ?? 1_000, (error) =>
      this.options.logger?.('WARN', `${subscription.groupId}: offsets not committed (${String(error)})`),
    );
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const topic = batch.topic.slice(this.ns.length);
        // A subscription that takes batches (a projection) gets up to KAFKA_HANDLE_BATCH messages at once,
        // applied in one transaction; its offset counts as handled once that transaction committed.
        const size = subscription.handleBatch ? KAFKA_HANDLE_BATCH : 1;
        for (let from = 0; from < batch.messages.length; from += size) {
          if (!isRunning() || isStale()) break;
          const group = batch.messages.slice(from, from + size);
          const deliveries = group.flatMap((message) => {
            const envelope = JSON.parse(message.value?.toString() ?? 'null') as EventEnvelope | null;
            const traceparent = message.headers?.traceparent?.toString();
            if (envelope && traceparent) envelope.traceparent = traceparent;
            return envelope
              ? [{ envelope, delivery: { topic, partition: batch.partition, offset: message.offset } }]
              : [];
          });
          if (subscription.handleBatch && deliveries.length > 1) {
            await this.handleBatchWithRetries(subscription, deliveries, maxAttempts);
          } else {
            for (const { envelope, delivery } of deliveries)
              await this.handleWithRetries(
                subscription,
                envelope,
                topic,
                batch.partition,
                delivery.offset,
                maxAttempts,
              );
          }
          const last = group[group.length - 1]!.offset;
          resolveOffset(last);
          // Only offsets whose handling (its transaction) is done are committed.
          await commits.handled(batch.topic, batch.partition, (BigInt(last) + 1n).toString());
          await heartbeat();
        }
      },
    });
    this.consumers.push({ consumer, commits });
  }

  /**
   * A group that replaces others (`Subscription.replaces`: a context's projections once had a group each) and
   * has no committed offset yet starts where they left off: on each partition of its topics, the lowest
   * offset committed by the groups that read that topic, unless one of them committed none there (then the
   * partition is read from the beginning, as a new group's are). Offsets can only be set while the group has
   * no member: if another process of the app joined it first, that process did the same and this one joins.
   */
  private async takeOver(subscription: Subscription): Promise<void> {
    const groupId = this.ns + subscription.groupId;
    const topics = subscription.topics.map((t) => this.ns + t);
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const own = await admin.fetchOffsets({ groupId, topics });
      if (own.some((t) => t.partitions.some((p) => Number(p.offset) >= 0))) return;
      /** topic -> partition -> the lowest committed offset so far, or null: read from the beginning. */
      const start = new Map<string, Map<number, bigint | null>>();
      for (const old of subscription.replaces ?? []) {
        const read = old.topics.map((t) => this.ns + t).filter((t) => topics.includes(t));
        if (read.length === 0) continue;
        for (const { topic, partitions } of await admin.fetchOffsets({
          groupId: this.ns + old.groupId,
          topics: read,
        })) {
          const byPartition = start.get(topic) ?? new Map<number, bigint | null>();
          start.set(topic, byPartition);
          for (const { partition, offset } of partitions) {
            const committed = Number(offset) >= 0 ? BigInt(offset) : null;
            const before = byPartition.get(partition);
            byPartition.set(
              partition,
              before === undefined
                ? committed
                : before === null || committed === null
                  ? null
                  : before < committed
                    ? before
                    : committed,
            );
          }
        }
      }
      try {
        for (const [topic, byPartition] of start) {
          const partitions = [...byPartition]
            .filter((entry): entry is [number, bigint] => entry[1] !== null)
            .map(([partition, offset]) => ({ partition, offset: offset.toString() }));
          if (partitions.length > 0) await admin.setOffsets({ groupId, topic, partitions });
        }
      } catch (error) {
        // Another process of the app joined first (offsets are set only on an empty group): it took over.
        this.options.logger?.('WARN', `${subscription.groupId}: offsets not taken over (${String(error)})`);
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** A group of messages through handleBatch; if it keeps failing, one by one (to dead-letter the bad one). */
  private async handleBatchWithRetries(
    subscription: Subscription,
    deliveries: readonly Delivery[],
    maxAttempts: number,
  ): Promise<void> {
    for (let attempt = 1; attempt < maxAttempts; attempt += 1) {
      try {
        await subscription.handleBatch!(deliveries);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
    for (const { envelope, delivery } of deliveries)
      await this.handleWithRetries(
        subscription,
        envelope,
        delivery.topic,
        delivery.partition,
        delivery.offset,
        maxAttempts,
      );
  }

  private async handleWithRetries(
    subscription: Subscription,
    envelope: EventEnvelope,
    topic: string,
    partition: number,
    offset: string,
    maxAttempts: number,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await subscription.handle(envelope, { topic, partition, offset });
        return;
      } catch (error) {
        if (attempt >= maxAttempts) {
          const producer = await this.getProducer();
          await producer.send({
            topic: this.ns + deadLetterTopicFor(topic),
            acks: -1,
            messages: [
              {
                key: envelope.streamId,
                value: JSON.stringify(envelope),
                headers: { groupId: subscription.groupId, error: String(error).slice(0, 1000) },
              },
            ],
          });
          this.options.logger?.(
            'ERROR',
            `dead-lettered ${envelope.type} ${envelope.eventId} for ${subscription.groupId}: ${String(error)}`,
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.consumers.map(async ({ consumer, commits }) => {
        // What was handled is committed before the consumer leaves; a group still being handled commits
        // at once (stopping waits for it).
        await commits.stopDeferring();
        await consumer.disconnect().catch(() => undefined);
      }),
    );
    this.consumers.length = 0;
    await this.producer?.disconnect().catch(() => undefined);
    this.producer = undefined;
  }
}

/**
 * A consumer's handled offsets, committed at most every `intervalMs` while it runs: the first handled group
 * after a quiet interval commits at once, later ones within the interval wait for one commit at its end.
 */
class OffsetCommits {
  /** topic + partition -> the next offset to read there. */
  private readonly pending = new Map<string, { topic: string; partition: number; offset: string }>();
  private lastCommitAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private deferring = true;

  constructor(
    private readonly consumer: Consumer,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  async handled(topic: string, partition: number, nextOffset: string): Promise<void> {
    this.pending.set(`${topic}\u0000${partition}`, { topic, partition, offset: nextOffset });
    const wait = this.lastCommitAt + this.intervalMs - Date.now();
    if (!this.deferring || wait <= 0) return this.commit();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.commit().catch(this.onError);
    }, wait);
  }

  /** Commits what is pending; from now on every handled group commits at once. */
  async stopDeferring(): Promise<void> {
    this.deferring = false;
    await this.commit().catch(this.onError);
  }

  private async commit(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const offsets = [...this.pending.values()];
    this.pending.clear();
    this.lastCommitAt = Date.now();
    // Requests on the coordinator's connection are answered in order, so a later commit never lands under
    // an earlier one. A failed commit is not retried: a later one covers its partitions, or they are read
    // again after a restart.
    await this.consumer.commitOffsets(offsets);
  }
}
