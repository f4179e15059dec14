import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { json, type NextFunction, type Request, type Response } from 'express';
import { Logger, LoggerModule } from 'nestjs-pino';
import { humanLogStream, logFormat, quietBootLogger } from './log-format';
import { ErrorEnvelopeFilter, toErrorResponse } from './error-envelope.filter';
import { InputLimitsPipe, MAX_BODY_BYTES, verifyJsonBody } from './input-limits';
import { exactJsonContentType } from './json-content-type';
import { rateLimitMiddleware } from './rate-limit';
import { apiValidationPipe } from './validation';

/** Drops secrets that may travel in a URL (older clients send `?api_key=`; backup downloads `?Authorization=`). */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:api_key|secret|key|authorization)=)[^&]*/gi, '$1[REDACTED]');
}

/**
 * Logs with request ids; Authorization, cookies and key query values never logged. JSON lines, or short
 * readable ones when stdout is a terminal (LOG_FORMAT=json|pretty to choose; log-format.ts).
 */
export function loggerModule() {
  const options = {
    level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[REDACTED]',
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
      }),
    },
    // One line says what was asked and how it went, in either format.
    customSuccessMessage: (req: IncomingMessage, res: ServerResponse, responseTime: number) =>
      `${req.method} ${redactUrl(req.url ?? '')} ${res.statusCode} ${Math.round(responseTime)} ms`,
    customErrorMessage: (req: IncomingMessage, res: ServerResponse) =>
      `${req.method} ${redactUrl(req.url ?? '')} ${res.statusCode} failed`,
  };
  return LoggerModule.forRoot({
    pinoHttp: logFormat() === 'pretty' ? [options, humanLogStream()] : options,
  });
}

/**
 * The HTTP conventions every app shares: JSON bodies within the request limits (input-limits.ts), Error
 * objects, validation, exact Content-Type. No signal handlers here: servePlatform handles SIGTERM and SIGINT
 * (and runs Nest's shutdown hooks through app.close()). Nothing may listen for SIGSEGV, SIGBUS, SIGILL or
 * SIGFPE: a listener turns a fatal fault (V8's WebAssembly trap handler uses SIGSEGV) into an endless loop
 * instead of an error or a crash that a supervisor restarts.
 */
export function configureHttpApp(app: INestApplication): void {
  // Nest's start-up chatter (every mapped route, every module) is debug, not info.
  app.useLogger(quietBootLogger(app.get(Logger)));
  // Before any parsing: a refused request costs a counter lookup only.
  app.use(rateLimitMiddleware());
  app.use(exactJsonContentType);
  app.use(json({ limit: MAX_BODY_BYTES, verify: verifyJsonBody }));
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (!error) return next();
    const { status, body } = toErrorResponse(error);
    res.status(status).type('application/json').send(JSON.stringify(body));
  });
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.useGlobalPipes(new InputLimitsPipe(), apiValidationPipe());
}
