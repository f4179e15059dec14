import type { DynamicModule, INestApplication } from '@nestjs/common';
import { type Clock, Database, type Transport } from '@rigmarket/event-sourcing';
import { createPlatformApp } from '@rigmarket/http-kit';
import { InProcessTransport, KafkaTransport } from '@rigmarket/messaging';
import { createTestDatabase, requiredEnv, uniqueName } from './services';

export type HarnessMode = 'embedded' | 'distributed';

/** For `describe.each(BOTH_MODES)`: the same HTTP suite in both ways of running. */
export const BOTH_MODES: Array<[string, HarnessMode]> = [
  ['embedded (PGlite, in-process transport)', 'embedded'],
  ['distributed (PostgreSQL, Kafka)', 'distributed'],
];

export interface PlatformHarness {
  app: INestApplication;
  db: Database;
  transport: Transport;
  close(): Promise<void>;
}

/**
 * Starts the given context modules as one Nest app (not listening; use supertest on app.getHttpServer()):
 * embedded = in-memory PGlite + in-process transport; distributed = a fresh PostgreSQL database + Kafka
 * with a namespace of its own. `close` drops what it made.
 */
export async function startPlatform(
  mode: HarnessMode,
  modules: DynamicModule[],
  options: { clock?: Clock } = {},
): Promise<PlatformHarness> {
  let db: Database;
  let transport: Transport;
  let drop: () => Promise<void> = async () => undefined;
  if (mode === 'embedded') {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    transport = new InProcessTransport();
  } else {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    const kafka = new KafkaTransport({
      brokers: requiredEnv('KAFKA_BROKERS').split(','),
      clientId: 'e2e',
      namespace: `${uniqueName('e2e')}.`,
    });
    await kafka.ensureTopics();
    transport = kafka;
  }
  const app = await createPlatformApp({ db, transport, modules, clock: options.clock });
  await app.init();
  return {
    app,
    db,
    transport,
    close: async () => {
      await app.close();
      await transport.close();
      await db.close();
      await drop();
    },
  };
}
