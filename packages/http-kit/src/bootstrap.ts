import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Database,
  DEFAULT_MAX_FLOW_LAG_MS,
  eventFlowProblem,
  onDatabaseFault,
  PlatformInfraModule,
  type RuntimeInfra,
  type Transport,
  systemClock,
} from '@rigmarket/event-sourcing';
import { eventSourceFromEnvironment, transportFromEnvironment } from '@rigmarket/messaging';
import { HealthModule } from './health';
import { httpDraining } from './http-drain';
import { configureHttpApp, loggerModule } from './http-app';
import { httpMetricsMiddleware, serveMetrics } from './metrics';
import { startTracingFromEnvironment, stopTracing } from './tracing';
import { serveApiDocs, serveOpenApiDocument } from './openapi';

export interface ServeOptions {
  /** Context modules to host: one (distributed) or all four (embedded). */
  modules: DynamicModule[];
  db: Database;
  transport: Transport;
  clock?: RuntimeInfra['clock'];
  relay?: RuntimeInfra['relay'];
  reactors?: RuntimeInfra['reactors'];
  soleProcess?: RuntimeInfra['soleProcess'];
  /** Where rebuilds read other contexts' events (RIGMARKET_REBUILD_SOURCE=kafka); default their stores. */
  eventSource?: RuntimeInfra['eventSource'];
  port: number;
  host?: string;
  /**
   * Handlers mounted before the contexts' routes (and Nest's 404), after the API docs: the embedded
   * platform serves the web console at `/` this way (apps/platform/src/console-site.ts).
   */
  site?: (app: INestApplication) => void;
  /** OpenTelemetry's service.name when tracing is on (OTEL_SERVICE_NAME overrides it); default `rigmarket`. */
  serviceName?: string;
}

@Module({})
class RootModule {}

/**
 * Builds and initialises the Nest application for the given contexts over the given adapters (not listening
 * yet). The transport is held while the contexts start (their relays cannot publish) and opened once every
 * projection and reactor has subscribed: the in-process transport keeps nothing for a late subscriber, and
 * an outbox row a crash left unpublished must reach every subscriber after the restart.
 */
export async function createPlatformApp(
  options: Omit<ServeOptions, 'port' | 'host'>,
): Promise<INestApplication> {
  options.transport.hold?.();
  const infra: RuntimeInfra = {
    db: options.db,
    transport: options.transport,
    clock: options.clock ?? systemClock,
    relay: options.relay,
    reactors: options.reactors,
    soleProcess: options.soleProcess,
    eventSource: options.eventSource,
    started: [],
  };
  const maxFlowLagMs = Number(process.env.RIGMARKET_READY_MAX_LAG_MS ?? DEFAULT_MAX_FLOW_LAG_MS);
  const root: DynamicModule = {
    module: RootModule,
    imports: [
      loggerModule(),
      PlatformInfraModule.forRoot(infra),
      HealthModule.forRoot(async () => {
        await options.db.query('SELECT 1');
        // parked events, a stuck outbox relay or a projection far behind: the reason, 503
        // (docs/operations.md, Parked events)
        const problem = await eventFlowProblem(
          options.db,
          undefined,
          maxFlowLagMs,
          (infra.started ?? []).map((c) => ({
            schema: c.schema,
            projections: c.definition.subscribedProjections,
          })),
        );
        if (problem) throw new Error(problem);
      }),
      ...options.modules,
    ],
  };
  const app = await NestFactory.create(root, { bodyParser: false, bufferLogs: true });
  // First, so that every request is timed (refused ones too).
  app.use(httpMetricsMiddleware(app));
  serveMetrics(app);
  configureHttpApp(app);
  serveOpenApiDocument(app);
  serveApiDocs(app);
  options.site?.(app);
  // Module init and bootstrap hooks subscribe the reactors: only after them may anything be delivered.
  await app.init();
  options.transport.open?.();
  // What the relays could not publish while held (rows a crash left, events of the start itself) goes out
  // now, so the app is caught up when it starts answering.
  await Promise.all((infra.started ?? []).map((c) => c.relay.flush().catch(() => 0)));
  return app;
}

/** A stop that has not finished by then exits the process with code 1, naming the step it was at. */
export const SHUTDOWN_DEADLINE_MS = 9_000;
/** How long requests in flight (and WebSocket peers) get to finish before their connections are cut. */
export const DRAIN_GRACE_MS = 3_000;

/**
 * Starts a process: the app listens; SIGTERM/SIGINT stop it gracefully, within SHUTDOWN_DEADLINE_MS:
 * 1. HTTP drains: no new connections, idle keep-alive connections closed at once, live streams (Server-Sent
 *    Events) ended, each response still sent says `Connection: close`; what is still open after DRAIN_GRACE_MS (a slow request, an agent's WebSocket)
 *    is cut.
 * 2. The app closes: Nest's shutdown hooks stop the reactor workers, outbox relays, subscriptions, the
 *    billing meter and other periodic jobs (each waits for its run in progress), the simulated host's timers,
 *    the agent channel.
 * 3. The transport closes (Kafka consumers leave their groups), then the database (pool or PGlite).
 * Then the process exits 0 and logs `stopped on SIGTERM in N ms`; a step that fails or hangs past the
 * deadline exits 1 with an error naming it. No other signal is handled: a fatal fault (SIGSEGV, SIGBUS) ends
 * the process, and a fault of the embedded database engine (DatabaseFaultError) exits it with status 70.
 */
export async function servePlatform(options: ServeOptions): Promise<INestApplication> {
  // A process whose embedded database faulted cannot serve again: it ends (status 70) for its supervisor
  // to restart it, instead of answering every request with an error (or never, see configureHttpApp).
  onDatabaseFault((fault) => {
    process.stderr.write(`${JSON.stringify({ level: 60, msg: fault.message })}\n`);
    process.exit(70);
  });
  // Off unless the OTEL_* variables (or RIGMARKET_TRACING=1) ask for it: docs/operations.md, Traces.
  await startTracingFromEnvironment(options.serviceName ?? 'rigmarket');
  const app = await createPlatformApp(options);
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  const sockets = new Set<Socket>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (_req, res: { setHeader(name: string, value: string): void }) => {
    if (closing) res.setHeader('Connection', 'close');
  });
  let stopping: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals) => {
    stopping ??= (async () => {
      const started = Date.now();
      let step = 'draining HTTP';
      const watchdog = setTimeout(() => {
        logger.error(`${signal}: not stopped within ${SHUTDOWN_DEADLINE_MS} ms (still ${step}); exiting`);
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS);
      watchdog.unref();
      try {
        closing = true;
        // Live streams (Server-Sent Events) end now instead of holding the drain until they are cut.
        httpDraining();
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const cut = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, DRAIN_GRACE_MS);
        await drained;
        clearTimeout(cut);
        step = 'stopping workers (Nest shutdown hooks)';
        await app.close();
        step = 'closing the transport';
        await options.transport.close();
        step = 'closing the database';
        await options.db.close();
        step = 'flushing traces';
        await stopTracing();
        logger.log(
          `stopped on ${signal} in ${Date.now() - started} ms: HTTP drained, workers stopped, transport and database closed`,
        );
        process.exit(0);
      } catch (error) {
        logger.error(`${signal}: stopping failed while ${step}: ${String(error)}`);
        process.exit(1);
      }
    })();
  };
  // Before listening: a signal that comes as soon as requests are answered is handled already. `on`, not
  // `once`: a library's signal-exit handler re-raises the signal (killing the process at once, status 143)
  // when it finds no other listener left, which `once` would have removed before its handler ran.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await app.listen(options.port, options.host ?? '127.0.0.1');
  logger.log(
    `listening on ${options.host ?? '127.0.0.1'}:${options.port}; SIGTERM or SIGINT stops it gracefully`,
  );
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
      eventSource: eventSourceFromEnvironment(appName),
      serviceName: appName,
      port: Number(process.env.PORT ?? defaultPort),
      host: process.env.HOST,
    });
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}
