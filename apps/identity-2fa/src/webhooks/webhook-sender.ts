import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, hostOf, isPrivateAddress } from './webhook-target';

/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_CHARS = 500;
/** Past this much of an answer the rest is not read. */
const MAX_RESPONSE_READ = 64 * 1024;

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the message, the same on every retry, for
 * the receiver's deduplication), `webhook-timestamp` (this attempt, Unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` under the secret's bytes).
 */
export function signedHeaders(
  secret: string,
  messageId: string,
  body: string,
  at: Date,
): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}

export interface AttemptResult {
  /** The receiver's HTTP status; null when none came (refused, timed out, blocked). */
  statusCode: number | null;
  ok: boolean;
  error: string | null;
  excerpt: string | null;
  durationMs: number;
}

/**
 * POSTs one message: no redirect followed, at most `timeoutMs` in all, the answer read up to 64 KiB and
 * kept as a short excerpt. A 2xx answer is a success; anything else, or no answer, a failure.
 */
export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<AttemptResult> {
  const started = Date.now();
  const done = (result: Omit<AttemptResult, 'durationMs' | 'ok'>): AttemptResult => ({
    ...result,
    ok: result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300,
    durationMs: Date.now() - started,
  });
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.resolve(done({ statusCode: null, error: 'invalid url', excerpt: null }));
  }
  if (!options.allowPrivate && isPrivateAddress(hostOf(url)))
    return Promise.resolve(
      done({ statusCode: null, error: 'the address is private: webhooks may not reach it', excerpt: null }),
    );
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs' | 'ok'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(result));
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(options.allowPrivate),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Rigmarket-Webhooks/1',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const settle = () =>
          finish({
            statusCode: res.statusCode ?? null,
            error: null,
            excerpt: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_EXCERPT_CHARS) || null,
          });
        res.on('data', (chunk: Buffer) => {
          if (read < MAX_RESPONSE_READ) chunks.push(chunk);
          read += chunk.length;
          if (read >= MAX_RESPONSE_READ) {
            settle();
            res.destroy();
          }
        });
        res.on('end', settle);
        res.on('error', settle);
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms`, excerpt: null });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error) =>
      finish({ statusCode: null, error: error.message.slice(0, 300), excerpt: null }),
    );
    req.end(body);
  });
}
