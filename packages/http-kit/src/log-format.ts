import type { LoggerService } from '@nestjs/common';
import type PinoPrettyModule from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

/**
 * JSON lines for machines (a file, a pipe, a log collector), short readable lines for a person at a terminal.
 * LOG_FORMAT=json|pretty overrides the guess.
 */
export function logFormat(
  env: NodeJS.ProcessEnv = process.env,
  stdoutIsTerminal: boolean = process.stdout.isTTY === true,
): LogFormat {
  const chosen = env.LOG_FORMAT?.trim().toLowerCase();
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return stdoutIsTerminal ? 'pretty' : 'json';
}

/**
 * One short line per entry: time, level, where from, what; written synchronously (no worker thread).
 * pino-pretty is loaded here, when first used: a process that logs JSON (not at a terminal) never needs it,
 * and loading it costs about a tenth of a second of every start (docs/benchmarks.md).
 */
export function humanLogStream(destination: NodeJS.WritableStream = process.stdout): NodeJS.WritableStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  const PinoPretty = require('pino-pretty') as typeof PinoPrettyModule;
  return PinoPretty({
    destination,
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,context,req,res,responseTime,reqId',
    messageFormat: '{if context}{context}: {end}{msg}',
  });
}

/** Nest's own start-up lines: one per module and per mapped route (over a hundred for the platform). */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** The context Nest passes as a log call's last argument. */
const contextOf = (params: unknown[]): unknown => params[params.length - 1];

/**
 * Nest's start-up chatter at debug instead of info, so that `npm start` shows what a person needs (where it
 * listens, the admin key, errors) and LOG_LEVEL=debug still shows every route.
 */
export function quietBootLogger(logger: LoggerService): LoggerService {
  return {
    log: (message: unknown, ...params: unknown[]) => {
      const context = contextOf(params);
      if (typeof context === 'string' && BOOT_CONTEXTS.has(context) && logger.debug) {
        logger.debug(message, ...params);
      } else {
        logger.log(message, ...params);
      }
    },
    error: (message: unknown, ...params: unknown[]) => logger.error(message, ...params),
    warn: (message: unknown, ...params: unknown[]) => logger.warn(message, ...params),
    debug: (message: unknown, ...params: unknown[]) => logger.debug?.(message, ...params),
    verbose: (message: unknown, ...params: unknown[]) => logger.verbose?.(message, ...params),
    fatal: (message: unknown, ...params: unknown[]) => logger.fatal?.(message, ...params),
  };
}
