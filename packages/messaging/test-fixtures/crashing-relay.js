// A relay process that dies (SIGKILL) right after Kafka acknowledged its batch and before it could
// mark the outbox rows published: the worst moment for an outbox. Runs the compiled packages.
// Usage: node crashing-relay.js <database-url> <kafka-brokers> <namespace> <schema>
const { Database, OutboxRelay } = require('@rigmarket/event-sourcing');
const { KafkaTransport } = require('@rigmarket/messaging');

async function main() {
  const [url, brokers, namespace, schema] = process.argv.slice(2);
  const db = await Database.connect({ kind: 'postgres', url });
  const kafka = new KafkaTransport({ brokers: brokers.split(','), clientId: 'crashing-relay', namespace });
  const dying = {
    kind: 'kafka',
    publish: async (messages) => {
      await kafka.publish(messages);
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => undefined);
    },
    subscribe: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  await new OutboxRelay(db, schema, dying, { leaseMs: 1000 }).flush();
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
