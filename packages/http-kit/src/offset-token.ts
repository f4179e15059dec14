import { ApiError } from '@rigmarket/contracts';

/** after_token / next_token of a paged list: an opaque, unsigned offset cursor (base64url JSON). */
export const encodeOffsetToken = (offset: number): string =>
  Buffer.from(JSON.stringify({ o: offset })).toString('base64url');

/** The offset a token names (0 without one); 400 for anything this server did not issue. */
export function decodeOffsetToken(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return 0;
  try {
    const parsed = JSON.parse(Buffer.from(String(raw), 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof parsed.o === 'number' && Number.isSafeInteger(parsed.o) && parsed.o >= 0) return parsed.o;
  } catch {
    // answered below
  }
  throw ApiError.badRequest('after_token is not a token this server issued');
}
