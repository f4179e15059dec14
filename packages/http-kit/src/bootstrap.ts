import type { DynamicModule, INestApplication } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Database,
  PlatformInfraModule,
  type RuntimeInfra,
  type Transport,
  systemClock,
} from '@rigmarket/event-sourcing';
import { transportFromEnvironment } from '@rigmarket/messaging';
import { HealthModule } from './health';
import { configureHttpApp, loggerModule } from './http-app';

export interface ServeOptions {
  /** Context modules to host: one (distributed) or all four (embedded). */
  modules: DynamicModule[];
  db: Database;
  transport: Transport;
  clock?: RuntimeInfra['clock'];
  relay?: RuntimeInfra['relay'];
  port: number;
  host?: string;
}

@Module({})
class RootModule {}

/** Builds the Nest application for the given contexts over the given adapters (not listening yet). */
export async function createPlatformApp(
  options: Omit<ServeOptions, 'port' | 'host'>,
): Promise<INestApplication> {
  const infra: RuntimeInfra = {
    db: options.db,
    transport: options.transport,
    clock: options.clock ?? systemClock,
    relay: options.relay,
  };
  const root: DynamicModule = {
    module: RootModule,
    imports: [
      loggerModule(),
      PlatformInfraModule.forRoot(infra),
      HealthModule.forRoot(async () => {
        await options.db.query('SELECT 1');
      }),
      ...options.modules,
    ],
  };
  const app = await NestFactory.create(root, { bodyParser: false, bufferLogs: true });
  configureHttpApp(app);
  return app;
}

/** Starts a process: the app listens; SIGTERM/SIGINT close HTTP, then the transport, then the database. */
export async function servePlatform(options: ServeOptions): Promise<INestApplication> {
  const app = await createPlatformApp(options);
  await app.listen(options.port, options.host ?? '127.0.0.1');
  const stop = async () => {
    await app.close();
    await options.transport.close();
    await options.db.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  return app;
}

export async function connectDatabaseFromEnvironment(applicationName: string): Promise<Database> {
  const options = Database.fromEnvironment();
  return Database.connect(options.kind === 'postgres' ? { ...options, applicationName } : options);
}

/**
 * Distributed mode: one context per process, on DATABASE_URL (PostgreSQL) and KAFKA_BROKERS (Kafka).
 * Without them it falls back to PGlite and the in-process transport, which suits a quick local try.
 */
export async function runStandalone(
  appName: string,
  defaultPort: number,
  modules: DynamicModule[],
): Promise<void> {
  try {
    const db = await connectDatabaseFromEnvironment(appName);
    const transport = await transportFromEnvironment(appName);
    await servePlatform({
      modules,
      db,
      transport,
      port: Number(process.env.PORT ?? defaultPort),
      host: process.env.HOST,
    });
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}
