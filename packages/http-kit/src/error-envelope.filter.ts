import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ApiError, DomainError, ErrorCodes, type ErrorBody } from '@rigmarket/contracts';
import { DOMAIN_ERROR_HTTP } from './domain-error-http';
import type { Request, Response } from 'express';
import { MAX_BODY_BYTES } from './input-limits';

const STATUS_CODES: Record<number, string> = {
  400: ErrorCodes.badRequest,
  401: ErrorCodes.invalidKey,
  403: ErrorCodes.forbidden,
  404: ErrorCodes.notFound,
  405: 'method_not_allowed',
  409: ErrorCodes.conflict,
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'rate_limited',
  503: ErrorCodes.serviceUnavailable,
};

/**
 * PostgreSQL error codes that only a caller's value can cause (a string with NUL or bad encoding, a number
 * past its column, text that is not a number, a value too large for an index): 400, never 500.
 */
export const INPUT_SQLSTATES: Readonly<Record<string, string>> = {
  '22P05': 'a string contains a character the database cannot store',
  '22021': 'a string is not valid UTF-8',
  '22003': 'a number is out of range',
  '22P02': 'a value has the wrong format',
  '22001': 'a string is too long',
  '22007': 'a date or time has the wrong format',
  '22008': 'a date or time is out of range',
  '2201B': 'a regular expression is invalid',
  '22025': 'a string has an invalid escape',
  '54000': 'a value is too large or too deeply nested',
  '54001': 'a value is too deeply nested',
};

function sqlState(exception: unknown): string | undefined {
  const error = exception as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = error?.driverError?.code ?? error?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * The database (or the connection to it) is away: a restart, a failover, a network cut. The request may
 * succeed if sent again shortly, so 503 rather than 500. SQLSTATE class 08 (connection exception), 57P01-03
 * (shutting down, crashed, not accepting connections yet), 53300 (too many connections), 40P01/40001 (a
 * deadlock or serialisation failure left after the command runner's retries), a socket error, or pg's own
 * messages for a lost or refused connection.
 */
function databaseUnavailable(exception: unknown): boolean {
  const state = sqlState(exception);
  if (
    state &&
    (state.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '40P01', '40001'].includes(state))
  )
    return true;
  const error = exception as { code?: unknown; driverError?: { code?: unknown }; message?: unknown } | null;
  const code = error?.driverError?.code ?? error?.code;
  if (typeof code === 'string' && UNAVAILABLE_NODE_CODES.has(code)) return true;
  // node-postgres's (and TypeORM's) own words for a connection lost or never made (no SQLSTATE on these).
  return (
    typeof error?.message === 'string' &&
    /^Connection terminated|^Client has encountered a connection error|^timeout exceeded when trying to connect|^Connection ended unexpectedly|^Query runner already released/.test(
      error.message,
    )
  );
}

/** Turns any failure into the API's Error object `{success: false, error, msg}` with a fitting status. */
export function toErrorResponse(exception: unknown, request?: Request): { status: number; body: ErrorBody } {
  if (exception instanceof ApiError) return { status: exception.status, body: exception.toBody() };
  if (exception instanceof DomainError) {
    const { status, msg } = DOMAIN_ERROR_HTTP[exception.code];
    const message = exception.hasMessage ? exception.message : msg;
    return { status, body: { ...exception.details, success: false, error: exception.code, msg: message } };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    if (status === 404 && request) {
      return {
        status,
        body: {
          success: false,
          error: ErrorCodes.notFound,
          msg: `No route for ${request.method} ${request.path}`,
        },
      };
    }
    const message =
      typeof response === 'string'
        ? response
        : Array.isArray((response as { message?: unknown }).message)
          ? (response as { message: string[] }).message.join('; ')
          : String((response as { message?: unknown }).message ?? exception.message);
    return {
      status,
      body: { success: false, error: STATUS_CODES[status] ?? `http_${status}`, msg: message },
    };
  }
  const state = sqlState(exception);
  if (state && INPUT_SQLSTATES[state]) {
    return {
      status: 400,
      body: {
        success: false,
        error: ErrorCodes.badRequest,
        msg: `Invalid request: ${INPUT_SQLSTATES[state]}`,
      },
    };
  }
  if (databaseUnavailable(exception)) {
    return {
      status: 503,
      body: {
        success: false,
        error: 'service_unavailable',
        msg: 'The database is unavailable at the moment; retry shortly',
      },
    };
  }
  const bodyParserError = exception as { type?: string; status?: number; message?: string };
  if (bodyParserError?.type === 'entity.parse.failed') {
    return {
      status: 400,
      body: {
        success: false,
        error: ErrorCodes.badRequest,
        msg: `Malformed JSON in request body: ${bodyParserError.message}`,
      },
    };
  }
  if (bodyParserError?.type === 'entity.too.large') {
    return {
      status: 413,
      body: {
        success: false,
        error: 'payload_too_large',
        msg: `Request body is larger than ${MAX_BODY_BYTES} bytes`,
      },
    };
  }
  if (
    typeof bodyParserError?.status === 'number' &&
    bodyParserError.status >= 400 &&
    bodyParserError.status < 500
  ) {
    return {
      status: bodyParserError.status,
      body: {
        success: false,
        error: STATUS_CODES[bodyParserError.status] ?? ErrorCodes.badRequest,
        msg: String(bodyParserError.message),
      },
    };
  }
  return { status: 500, body: { success: false, error: ErrorCodes.internal, msg: 'Internal server error' } };
}

@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const { status, body } = toErrorResponse(exception, request);
    if (status >= 500) this.logger.error({ err: exception, path: request.path }, 'request failed');
    if (response.headersSent) return;
    // A refusal that says when to come back (429 lockouts, rate limits) says it in Retry-After too.
    if (typeof body.retry_after === 'number') response.setHeader('Retry-After', String(body.retry_after));
    response.status(status).type('application/json').send(JSON.stringify(body));
  }
}
