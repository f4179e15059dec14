import { randomBytes } from 'node:crypto';
import express from 'express';
import { Client } from 'pg';
import request from 'supertest';
import { type RateLimitConfig, rateLimitMiddleware } from './rate-limit';

/** Distributed mode: two processes (here two apps with their own pools) count in one PostgreSQL table. */
describe('rate limits in PostgreSQL (RIGMARKET_RATE_LIMIT_STORE=postgres)', () => {
  const url = process.env.DATABASE_URL;
  const tableName = `rate_limits_${randomBytes(4).toString('hex')}`;

  afterAll(async () => {
    if (!url) return;
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS "${tableName}"`);
    await client.end();
  });

  it('counts requests of one address across processes', async () => {
    if (!url)
      throw new Error('DATABASE_URL is not set: run the suite with `npm test`, which starts PostgreSQL');
    const config: RateLimitConfig = {
      perAddress: { points: 4, durationS: 60 },
      perKey: { points: 0, durationS: 60 },
      strict: { points: 0, durationS: 60 },
      trustedProxies: [],
      postgres: { url, tableName },
    };
    const app = () => {
      const a = express();
      a.use(rateLimitMiddleware(config));
      a.get('/api/v0/bundles', (_req, res) => void res.json({ success: true }));
      return a;
    };
    const [one, two] = [app(), app()];
    // Let both create (or find) the table.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await request(i % 2 === 0 ? one : two).get('/api/v0/bundles')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const client = new Client({ connectionString: url });
    await client.connect();
    const rows = await client.query(`SELECT points FROM "${tableName}"`);
    await client.end();
    expect(rows.rows.map((r: { points: number }) => Number(r.points))).toEqual([6]);
  });
});
