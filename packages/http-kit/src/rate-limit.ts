import { createHash } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from '@nestjs/common';
import { Pool } from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { bearerValue } from './auth.guard';

/** `points` requests per `durationS` seconds. */
export interface RateLimitRule {
  points: number;
  durationS: number;
}

export interface RateLimitConfig {
  /** Every request, per client address (RIGMARKET_RATE_LIMIT). */
  perAddress: RateLimitRule;
  /** Every request with a bearer, per key (RIGMARKET_RATE_LIMIT_KEY). */
  perKey: RateLimitRule;
  /** Login, registration, e-mail verification, 2FA and key creation, per address (RIGMARKET_RATE_LIMIT_STRICT). */
  strict: RateLimitRule;
  /**
   * Peers whose X-Forwarded-For names the client (RIGMARKET_TRUSTED_PROXIES; the nginx edge): addresses or
   * CIDR ranges (`10.0.0.0/8`; edge pods whose addresses change).
   */
  trustedProxies: string[];
  /**
   * Shared counters: every process of every app counts in one PostgreSQL table (RIGMARKET_RATE_LIMIT_STORE=
   * postgres with DATABASE_URL); otherwise each process counts in memory.
   */
  postgres?: { url: string; tableName?: string };
}

export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  perAddress: { points: 1200, durationS: 60 },
  perKey: { points: 1200, durationS: 60 },
  strict: { points: 30, durationS: 60 },
  trustedProxies: ['127.0.0.1', '::1', '::ffff:127.0.0.1'],
};

function rule(value: string | undefined, fallback: RateLimitRule): RateLimitRule {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*s?\s*$/.exec(value ?? '');
  if (!match) return fallback;
  return { points: Number(match[1]), durationS: Math.max(1, Number(match[2])) };
}

/** `<points>/<seconds>` each, e.g. RIGMARKET_RATE_LIMIT=1200/60; `0/60` turns that limit off. */
export function rateLimitConfigFromEnv(env: NodeJS.ProcessEnv = process.env): RateLimitConfig {
  return {
    perAddress: rule(env.RIGMARKET_RATE_LIMIT, DEFAULT_RATE_LIMITS.perAddress),
    perKey: rule(env.RIGMARKET_RATE_LIMIT_KEY, DEFAULT_RATE_LIMITS.perKey),
    strict: rule(env.RIGMARKET_RATE_LIMIT_STRICT, DEFAULT_RATE_LIMITS.strict),
    trustedProxies: env.RIGMARKET_TRUSTED_PROXIES
      ? env.RIGMARKET_TRUSTED_PROXIES.split(',').map((p) => p.trim())
      : DEFAULT_RATE_LIMITS.trustedProxies,
    ...(env.RIGMARKET_RATE_LIMIT_STORE === 'postgres' && env.DATABASE_URL
      ? { postgres: { url: env.DATABASE_URL } }
      : {}),
  };
}

/**
 * Routes an attacker would hammer: password and code guessing, sign-ups, key minting, team invitations (mail),
 * and the webhook routes that make the platform send requests (endpoint creation, secret rotation, redelivery).
 */
export function isStrictRoute(method: string, path: string): boolean {
  const p = path.replace(/\/+$/, '');
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  return (
    (method === 'POST' && p === '/api/v0/users') ||
    /^\/api\/v0\/users\/(login|verify_email|password)$/.test(p) ||
    p.startsWith('/api/v0/tfa') ||
    (method === 'POST' && p === '/api/v0/auth/apikeys') ||
    (method === 'POST' && /^\/api\/v0\/team\/(invite|join)$/.test(p)) ||
    (method === 'POST' && /^\/api\/v0\/webhooks(\/|$)/.test(p))
  );
}

/** An IPv4 peer of a dual-stack socket (`::ffff:10.1.2.3`) as the IPv4 address it is. */
function unmapped(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return v4 ? v4[1]! : address;
}

const proxyMatchers = new WeakMap<readonly string[], (peer: string) => boolean>();

/** Whether `peer` is one of `trustedProxies`: an exact address, or inside one of its `address/bits` ranges. */
function isTrustedProxy(trustedProxies: readonly string[], peer: string): boolean {
  let matches = proxyMatchers.get(trustedProxies);
  if (!matches) {
    const exact = new Set<string>();
    const ranges = new BlockList();
    for (const entry of trustedProxies) {
      const [address = '', bits] = entry.split('/');
      const family = isIP(address);
      if (bits === undefined || family === 0) {
        exact.add(entry);
        continue;
      }
      const prefix = Number(bits);
      if (Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
        ranges.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
      }
    }
    matches = (candidate) => {
      if (exact.has(candidate)) return true;
      const address = unmapped(candidate);
      const family = isIP(address);
      return exact.has(address) || (family !== 0 && ranges.check(address, family === 4 ? 'ipv4' : 'ipv6'));
    };
    proxyMatchers.set(trustedProxies, matches);
  }
  return matches(peer);
}

/** The client: the socket's peer, or, behind a trusted proxy, the last address that proxy added. */
export function clientAddress(request: Request, trustedProxies: readonly string[]): string {
  const peer = request.socket.remoteAddress ?? 'unknown';
  const forwarded = request.headers['x-forwarded-for'];
  if (typeof forwarded === 'string' && isTrustedProxy(trustedProxies, peer)) {
    const hops = forwarded
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    if (hops.length > 0) return hops[hops.length - 1]!;
  }
  return peer;
}

interface Bucket {
  name: 'address' | 'key' | 'strict';
  rule: RateLimitRule;
  limiter: Promise<RateLimiterAbstract>;
}

/** Creates the shared counters' table (rate-limiter-flexible's layout) once, serialised across processes. */
async function createRateLimitTable(pool: Pool, tableName: string): Promise<boolean> {
  const client = await pool.connect().catch(() => null);
  if (!client) return false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rigmarket-rate-limit:${tableName}`]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${tableName.replace(/"/g, '""')}" (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`,
    );
    await client.query('COMMIT');
    return true;
  } catch {
    await client.query('ROLLBACK').catch(() => undefined);
    return false;
  } finally {
    client.release();
  }
}

/**
 * Rate limiting at the edge of every app (rate-limiter-flexible, in memory per process): per client
 * address, per bearer key, and stricter on login, registration, 2FA and key creation. Each answer carries
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers); a refusal is 429 `rate_limited`
 * with `Retry-After`. /healthz and /readyz are not limited. docs/operations.md, "Rate limits".
 */
export function rateLimitMiddleware(config: RateLimitConfig = rateLimitConfigFromEnv()) {
  const logger = new Logger('rate-limit');
  const pool = config.postgres
    ? new Pool({ connectionString: config.postgres.url, max: 2, application_name: 'rigmarket-rate-limit' })
    : null;
  pool?.on('error', (error) => logger.warn(`rate-limit store: ${error.message}`));
  const tableName = config.postgres?.tableName ?? 'rigmarket_rate_limits';
  // The table is made once here, under an advisory lock: processes starting together would otherwise race
  // on CREATE TABLE IF NOT EXISTS ("type ... already exists"), and the loser would count in memory alone.
  const tableReady = pool ? createRateLimitTable(pool, tableName) : Promise.resolve(true);
  void tableReady.then((ok) => {
    if (!ok) logger.warn('rate-limit store: the table could not be created; counting in memory');
  });
  const bucket = (name: Bucket['name'], r: RateLimitRule): Bucket | null => {
    if (r.points <= 0) return null;
    const options = { keyPrefix: name, points: r.points, duration: r.durationS };
    // While the shared store cannot answer, each process falls back to its own memory counters.
    const memory = new RateLimiterMemory(options);
    const limiter: Promise<RateLimiterAbstract> = pool
      ? tableReady.then((ok) =>
          ok
            ? new RateLimiterPostgres(
                {
                  ...options,
                  storeClient: pool,
                  storeType: 'pool',
                  tableName,
                  tableCreated: true,
                  clearExpiredByTimeout: true,
                  insuranceLimiter: memory,
                },
                (error?: Error) => {
                  if (error) logger.warn(`rate-limit store: ${error.message}`);
                },
              )
            : memory,
        )
      : Promise.resolve(memory);
    return { name, rule: r, limiter };
  };
  const address = bucket('address', config.perAddress);
  const key = bucket('key', config.perKey);
  const strict = bucket('strict', config.strict);

  return async (request: Request, response: Response, next: NextFunction): Promise<void> => {
    if (/^\/(healthz|readyz)\/?$/.test(request.path)) return next();
    const client = clientAddress(request, config.trustedProxies);
    const bearer = bearerValue(request);
    const applied: Array<[Bucket, string]> = [];
    if (address) applied.push([address, client]);
    if (key && bearer) applied.push([key, createHash('sha256').update(bearer).digest('hex')]);
    if (strict && isStrictRoute(request.method, request.path)) applied.push([strict, client]);
    if (applied.length === 0) return next();
    response.setHeader(
      'RateLimit-Policy',
      applied.map(([b]) => `"${b.name}";q=${b.rule.points};w=${b.rule.durationS}`).join(', '),
    );
    let tightest: { bucket: Bucket; res: RateLimiterRes } | null = null;
    for (const [b, id] of applied) {
      try {
        const res = await (await b.limiter).consume(id);
        if (!tightest || res.remainingPoints < tightest.res.remainingPoints) tightest = { bucket: b, res };
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) {
          // A store failure never refuses a request.
          logger.warn(`rate-limit store: ${error instanceof Error ? error.message : String(error)}`);
          continue;
        }
        const retryAfter = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
        response.setHeader('RateLimit', `"${b.name}";r=0;t=${retryAfter}`);
        response.setHeader('Retry-After', String(retryAfter));
        response
          .status(429)
          .type('application/json')
          .send(
            JSON.stringify({
              success: false,
              error: 'rate_limited',
              msg: `Too many requests (${b.rule.points} per ${b.rule.durationS} s per ${b.name}); retry in ${retryAfter} s`,
              retry_after: retryAfter,
            }),
          );
        return;
      }
    }
    if (tightest)
      response.setHeader(
        'RateLimit',
        `"${tightest.bucket.name}";r=${tightest.res.remainingPoints};t=${Math.max(1, Math.ceil(tightest.res.msBeforeNext / 1000))}`,
      );
    next();
  };
}
