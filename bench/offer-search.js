// Offer search at marketplace scale: 100,000 offers in the offers read model, typical CLI queries over
// HTTP (POST /api/v0/bundles/), p50/p95 per query.
// Run: bash scripts/infra.sh up && . .infra/env && npm run build && node bench/offer-search.js [rounds] [--embedded]
// Without DATABASE_URL (or with --embedded) it runs on PGlite in memory (embedded mode).
require('./no-rate-limits');
require('reflect-metadata');
const { Client } = require('pg');
const { Database, runMigrations, eventStoreMigration } = require('@rigmarket/event-sourcing');
const { createPlatformApp } = require('@rigmarket/http-kit');
const { IdentityModule } = require('@rigmarket/identity-2fa');
const { InProcessTransport } = require('@rigmarket/messaging');
const {
  MarketplaceModule,
  marketplaceContext,
  insertOfferRows,
  syntheticOfferRows,
  EXAMPLE_SEARCHES,
} = require('@rigmarket/marketplace-api');

const BENCH_KEY = 'bench-search-admin-key-0123456789';

/** Waits until the admin key has reached the marketplace's key projection (asynchronous, in-process). */
async function keyReady(base) {
  for (let i = 0; i < 300; i += 1) {
    const res = await fetch(`${base}/api/v0/bundles/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${BENCH_KEY}`, 'Content-Type': 'application/json' },
      body: '{"limit":1}',
    });
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the bench key never reached the marketplace');
}

const ROUNDS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200);
const EMBEDDED = process.argv.includes('--embedded') || !process.env.DATABASE_URL;
const COUNT = 100000;

const QUERIES = EXAMPLE_SEARCHES;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  let db;
  let dropDb = async () => undefined;
  if (EMBEDDED) {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  } else {
    const name = `rmbench_${Date.now()}`;
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    db = await Database.connect({ kind: 'postgres', url: url.toString() });
    dropDb = async () => {
      const c = new Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  process.env.LOG_LEVEL = 'silent';
  const transport = new InProcessTransport();
  // Search needs a key, as every endpoint: identity's admin key, projected into the marketplace.
  const app = await createPlatformApp({
    db,
    transport,
    modules: [IdentityModule.forRoot({ adminKey: BENCH_KEY }), MarketplaceModule.forRoot()],
  });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  await keyReady(base);
  const loadStart = Date.now();
  const rows = syntheticOfferRows(COUNT, 42, Math.floor(Date.now() / 1000));
  await db.transaction((sql) => insertOfferRows(sql, rows));
  await db.execute('ANALYZE marketplace.offers');
  console.log(
    `${EMBEDDED ? 'embedded (PGlite)' : 'distributed (PostgreSQL)'}: ${COUNT} offers loaded in ${Date.now() - loadStart} ms; ${ROUNDS} rounds per query`,
  );

  const results = [];
  for (const [name, body] of Object.entries(QUERIES)) {
    const post = async () => {
      const res = await fetch(`${base}/api/v0/bundles/`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${BENCH_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()).offers.length;
    };
    for (let i = 0; i < 10; i += 1) await post(); // warm-up
    const times = [];
    let found = 0;
    for (let i = 0; i < ROUNDS; i += 1) {
      const t0 = process.hrtime.bigint();
      found = await post();
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    results.push({
      query: name,
      offers: found,
      p50_ms: +percentile(times, 50).toFixed(2),
      p95_ms: +percentile(times, 95).toFixed(2),
    });
  }
  console.table(results);
  await app.close();
  await transport.close();
  await db.close();
  await dropDb();
}

module.exports = { QUERIES };

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
