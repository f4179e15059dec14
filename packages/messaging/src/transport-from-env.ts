import type { Transport } from '@rigmarket/event-sourcing';
import { InProcessTransport } from './in-process.transport';
import { KafkaTransport } from './kafka.transport';

/** KAFKA_BROKERS set: Apache Kafka (distributed); otherwise the in-process transport (embedded). */
export async function transportFromEnvironment(
  clientId: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Transport> {
  if (!env.KAFKA_BROKERS) return new InProcessTransport();
  const transport = new KafkaTransport({
    brokers: env.KAFKA_BROKERS.split(','),
    clientId,
    namespace: env.RIGMARKET_KAFKA_NAMESPACE,
  });
  await transport.ensureTopics();
  return transport;
}
