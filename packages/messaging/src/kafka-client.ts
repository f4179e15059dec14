import { Kafka, logLevel } from 'kafkajs';

/** The platform's Kafka client settings, shared by the transport and the replaying event source. */
export function kafkaClient(options: {
  brokers: string[];
  clientId: string;
  logger?: (level: string, message: string) => void;
}): Kafka {
  const { logger } = options;
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 100 },
    // kafkajs's own log lines go to the given logger, or nowhere (not to the console).
    logCreator: () => (entry) => logger?.(String(entry.level), `${entry.namespace}: ${entry.log.message}`),
  });
}
