import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ApiError, ErrorCodes, type ErrorBody } from '@rigmarket/contracts';
import type { Request, Response } from 'express';

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

/** Turns any failure into the API's Error object `{success: false, error, msg}` with a fitting status. */
export function toErrorResponse(exception: unknown, request?: Request): { status: number; body: ErrorBody } {
  if (exception instanceof ApiError) return { status: exception.status, body: exception.toBody() };
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
      body: { success: false, error: 'payload_too_large', msg: 'Request body is too large' },
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
    response.status(status).type('application/json').send(JSON.stringify(body));
  }
}
