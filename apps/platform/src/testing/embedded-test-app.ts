import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { createEmbeddedApp } from '../platform';

export type EmbeddedTestAppOptions = Omit<Parameters<typeof createEmbeddedApp>[0], 'db' | 'transport'>;

export interface EmbeddedTestApp {
  app: INestApplication;
  db: Database;
  /** Closes the app, then its database. */
  close(): Promise<void>;
}

/**
 * The embedded platform in this process (createEmbeddedApp with `options`) on PGlite in memory and the
 * in-process transport, initialised: supertest on app.getHttpServer(), or app.listen for a URL.
 */
export async function startEmbeddedTestApp(options: EmbeddedTestAppOptions): Promise<EmbeddedTestApp> {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  try {
    const app = await createEmbeddedApp({ db, transport: new InProcessTransport(), ...options });
    await app.init();
    return {
      app,
      db,
      close: async () => {
        await app.close();
        await db.close();
      },
    };
  } catch (failure) {
    await db.close();
    throw failure;
  }
}
