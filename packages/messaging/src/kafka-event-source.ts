import { randomUUID } from 'node:crypto';
import { type ContextName, type EventEnvelope, topicFor } from '@rigmarket/contracts';
import type { EventSource } from '@rigmarket/event-sourcing';
import type { Kafka } from 'kafkajs';
import { kafkaClient } from './kafka-client';

export interface KafkaEventSourceOptions {
  brokers: string[];
  clientId: string;
  /** The topic prefix the transport uses (RIGMARKET_KAFKA_NAMESPACE). */
  namespace?: string;
  /** Events handed to onBatch at a time. */
  batchSize?: number;
}

/**
 * Replays another context's public events from its Kafka topics, which are kept forever (retention -1):
 * a rebuild that works when the contexts have separate databases. Each topic is read from its first offset
 * to the end it had when the replay began, by a throwaway consumer group (deleted afterwards); a stream's
 * events keep their order (one key, one partition). Private events never reach Kafka, so only projections
 * of public events can be rebuilt this way (all subscribed projections are).
 */
export class KafkaEventSource implements EventSource {
  private readonly kafka: Kafka;
  private readonly ns: string;

  constructor(private readonly options: KafkaEventSourceOptions) {
    this.ns = options.namespace ?? '';
    this.kafka = kafkaClient(options);
  }

  async replay(
    context: ContextName,
    streamTypes: readonly string[],
    onBatch: (events: EventEnvelope[]) => Promise<void>,
  ): Promise<{ source: string; position: string }> {
    const topics = [...new Set(streamTypes.map((t) => this.ns + topicFor(context, t)))];
    const admin = this.kafka.admin();
    await admin.connect();
    const groupId = `${this.ns}rigmarket.replay.${randomUUID()}`;
    try {
      // Where each partition ends now: the replay stops there (later events reach the live subscription).
      const remaining = new Map<string, bigint>();
      const ends: string[] = [];
      for (const topic of topics) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const high = BigInt(p.high);
          ends.push(`${topic}:${p.partition}@${p.high}`);
          if (high > BigInt(p.low)) remaining.set(`${topic}:${p.partition}`, high);
        }
      }
      const position = ends.sort().join(',');
      if (remaining.size === 0) return { source: `kafka:${context}`, position };
      const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
      await consumer.connect();
      try {
        await consumer.subscribe({ topics, fromBeginning: true });
        await new Promise<void>((resolve, reject) => {
          consumer
            .run({
              autoCommit: false,
              eachBatch: async ({ batch, heartbeat }) => {
                const key = `${batch.topic}:${batch.partition}`;
                const end = remaining.get(key);
                if (end === undefined) return;
                const events: EventEnvelope[] = [];
                let last = -1n;
                for (const message of batch.messages) {
                  const offset = BigInt(message.offset);
                  if (offset >= end) break;
                  last = offset;
                  const envelope = JSON.parse(message.value?.toString() ?? 'null') as EventEnvelope | null;
                  if (envelope && streamTypes.includes(envelope.streamType)) events.push(envelope);
                }
                for (let i = 0; i < events.length; i += this.options.batchSize ?? 500)
                  await onBatch(events.slice(i, i + (this.options.batchSize ?? 500)));
                await heartbeat();
                if (last + 1n >= end) {
                  remaining.delete(key);
                  if (remaining.size === 0) resolve();
                }
              },
            })
            .catch(reject);
          consumer.on(consumer.events.CRASH, (event) => reject(event.payload.error));
        });
      } finally {
        await consumer.disconnect();
      }
      return { source: `kafka:${context}`, position };
    } finally {
      await admin.deleteGroups([groupId]).catch(() => undefined);
      await admin.disconnect();
    }
  }
}

/** RIGMARKET_REBUILD_SOURCE=kafka (with KAFKA_BROKERS): rebuilds read other contexts' events from Kafka. */
export function eventSourceFromEnvironment(
  clientId: string,
  env: NodeJS.ProcessEnv = process.env,
): EventSource | undefined {
  if (env.RIGMARKET_REBUILD_SOURCE !== 'kafka') return undefined;
  if (!env.KAFKA_BROKERS) throw new Error('RIGMARKET_REBUILD_SOURCE=kafka needs KAFKA_BROKERS');
  return new KafkaEventSource({
    brokers: env.KAFKA_BROKERS.split(','),
    clientId: `${clientId}-replay`,
    namespace: env.RIGMARKET_KAFKA_NAMESPACE,
  });
}
