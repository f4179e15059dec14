/** The API's Error object. Every failure answers it. */
export interface ErrorBody {
  success: false;
  error: string;
  msg: string;
  [extra: string]: unknown;
}

export const ErrorCodes = {
  badRequest: 'bad_request',
  notFound: 'not_found',
  authError: 'auth_error',
  invalidKey: 'invalid_key',
  forbidden: 'forbidden',
  conflict: 'conflict',
  internal: 'internal_error',
  serviceUnavailable: 'service_unavailable',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes] | string;

/**
 * A domain or application failure that knows its HTTP status. Thrown by handlers, turned into the
 * Error object by the HTTP layer.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    return { ...this.extra, success: false, error: this.code, msg: this.message };
  }

  static badRequest(msg: string, extra?: Record<string, unknown>): ApiError {
    return new ApiError(400, ErrorCodes.badRequest, msg, extra);
  }
  static notFound(msg: string, code: string = ErrorCodes.notFound): ApiError {
    return new ApiError(404, code, msg);
  }
  static forbidden(msg: string, code: string = ErrorCodes.forbidden): ApiError {
    return new ApiError(403, code, msg);
  }
  static conflict(msg: string, code: string = ErrorCodes.conflict): ApiError {
    return new ApiError(409, code, msg);
  }
}
