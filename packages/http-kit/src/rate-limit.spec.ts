import express from 'express';
import request from 'supertest';
import { clientAddress, isStrictRoute, type RateLimitConfig, rateLimitMiddleware } from './rate-limit';

const LOW: RateLimitConfig = {
  perAddress: { points: 5, durationS: 60 },
  perKey: { points: 3, durationS: 60 },
  strict: { points: 2, durationS: 60 },
  trustedProxies: [],
};

function app(config: RateLimitConfig) {
  const a = express();
  a.use(rateLimitMiddleware(config));
  a.all('/{*path}', (_req, res) => void res.json({ success: true }));
  return a;
}

describe('rate limits', () => {
  it('answer 429 rate_limited with Retry-After and the RateLimit headers once an address spends its quota', async () => {
    const server = app(LOW);
    for (let i = 0; i < 5; i++) {
      const ok = await request(server).get('/api/v0/bundles/').expect(200);
      expect(ok.headers['ratelimit-policy']).toBe('"address";q=5;w=60');
      expect(ok.headers['ratelimit']).toMatch(new RegExp(`^"address";r=${4 - i};t=\\d+$`));
    }
    const refused = await request(server).get('/api/v0/bundles/').expect(429);
    expect(refused.body).toMatchObject({
      success: false,
      error: 'rate_limited',
      retry_after: expect.any(Number),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit']).toMatch(/^"address";r=0;t=\d+$/);
    // Health checks are never limited.
    await request(server).get('/healthz').expect(200);
  });

  it('count per key as well, and stricter on login, registration, 2FA and key creation', async () => {
    const server = app({ ...LOW, perAddress: { points: 100, durationS: 60 } });
    const as = (key: string) => ({ Authorization: `Bearer ${key}` });
    for (let i = 0; i < 3; i++) await request(server).get('/api/v0/instances/').set(as('key-a')).expect(200);
    const byKey = await request(server).get('/api/v0/instances/').set(as('key-a')).expect(429);
    expect(byKey.body.msg).toContain('per key');
    await request(server).get('/api/v0/instances/').set(as('key-b')).expect(200);

    await request(server).post('/api/v0/users/login/').send({}).expect(200);
    await request(server).post('/api/v0/users/login/').send({}).expect(200);
    const strict = await request(server).post('/api/v0/users/login/').send({}).expect(429);
    expect(strict.body.msg).toContain('per strict');
    await request(server).get('/api/v0/users/current/').expect(200);
  });

  it('knows the strict routes and takes the client address from a trusted proxy only', () => {
    expect(isStrictRoute('POST', '/api/v0/users/')).toBe(true);
    expect(isStrictRoute('POST', '/api/v0/users/login')).toBe(true);
    expect(isStrictRoute('PUT', '/api/v0/tfa/totp-setup/')).toBe(true);
    expect(isStrictRoute('POST', '/api/v0/auth/apikeys/')).toBe(true);
    expect(isStrictRoute('GET', '/api/v0/auth/apikeys/')).toBe(false);
    expect(isStrictRoute('POST', '/api/v0/webhooks/')).toBe(true);
    expect(isStrictRoute('POST', '/api/v0/webhooks/3/deliveries/9/redeliver/')).toBe(true);
    expect(isStrictRoute('GET', '/api/v0/webhooks/3/deliveries/')).toBe(false);
    expect(isStrictRoute('PUT', '/api/v0/search/asks/')).toBe(false);
    const req = (peer: string, xff?: string) =>
      ({ socket: { remoteAddress: peer }, headers: xff ? { 'x-forwarded-for': xff } : {} }) as never;
    expect(clientAddress(req('127.0.0.1', '203.0.113.9, 198.51.100.7'), ['127.0.0.1'])).toBe('198.51.100.7');
    expect(clientAddress(req('192.0.2.1', '203.0.113.9'), ['127.0.0.1'])).toBe('192.0.2.1');
  });

  it('trusts a proxy inside a CIDR range (edge pods whose addresses change), IPv4 peers of dual-stack sockets too', () => {
    const req = (peer: string, xff: string) =>
      ({ socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': xff } }) as never;
    const pods = ['10.0.0.0/8', 'fd00::/8', '192.0.2.7'];
    expect(clientAddress(req('10.42.3.17', '203.0.113.9'), pods)).toBe('203.0.113.9');
    expect(clientAddress(req('::ffff:10.42.3.17', '203.0.113.9'), pods)).toBe('203.0.113.9');
    expect(clientAddress(req('fd12::5', '203.0.113.9'), pods)).toBe('203.0.113.9');
    expect(clientAddress(req('::ffff:192.0.2.7', '203.0.113.9'), pods)).toBe('203.0.113.9');
    // outside every range: the peer itself, whatever it claims to forward for
    expect(clientAddress(req('11.0.0.1', '203.0.113.9'), pods)).toBe('11.0.0.1');
    expect(clientAddress(req('fe80::1', '203.0.113.9'), pods)).toBe('fe80::1');
    // a malformed range trusts nobody
    expect(clientAddress(req('10.1.1.1', '203.0.113.9'), ['10.0.0.0/99', '10.0.0.0/x'])).toBe('10.1.1.1');
  });
});
