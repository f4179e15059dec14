import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { createEmbeddedApp } from '../platform';

export type EmbeddedTestAppOptions = Omit<Parameters<typeof createEmbeddedApp>[0], 'db' | 'transport'>;

export interface EmbeddedTestApp {
  app: INestApplication;
  db: Database;
  /** Closes the app (its loops stopped, their statements ended), its transport, then its database. */
  close(): Promise<void>;
}

/**
 * The embedded platform in this process (createEmbeddedApp with `options`) on PGlite in memory and the
 * in-process transport, initialised: supertest on app.getHttpServer(), or app.listen for a URL.
 */
export async function startEmbeddedTestApp(options: EmbeddedTestAppOptions): Promise<EmbeddedTestApp> {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  try {
    const transport = new InProcessTransport();
    const app = await createEmbeddedApp({ db, transport, ...options });
    await app.init();
    return {
      app,
      db,
      close: async () => {
        // The app's loops stop in its close(); the deliveries they started end with the transport's.
        await app.close();
        await transport.close();
        await db.close();
      },
    };
  } catch (failure) {
    await db.close();
    throw failure;
  }
}
