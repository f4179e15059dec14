import type { Kafka } from 'kafkajs';

/**
 * The platform's Kafka client settings, shared by the transport and the replaying event source. kafkajs is
 * loaded on the first call: an embedded process (no KAFKA_BROKERS) never needs it.
 */
export function kafkaClient(options: {
  brokers: string[];
  clientId: string;
  logger?: (level: string, message: string) => void;
}): Kafka {
  const { logger } = options;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  const { Kafka: KafkaClient, logLevel } = require('kafkajs') as typeof import('kafkajs');
  return new KafkaClient({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 100 },
    // kafkajs's own log lines go to the given logger, or nowhere (not to the console).
    logCreator: () => (entry) => logger?.(String(entry.level), `${entry.namespace}: ${entry.log.message}`),
  });
}
