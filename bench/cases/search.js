// Offer search over HTTP (POST /api/v0/bundles/) at 10k and 100k offers, and 1M on PostgreSQL: the CLI's
// default query and three filtered ones, p50/p99 each; throughput of the default query with 8 concurrent
// clients. Ceilings in the same run: GET /healthz on the same server (latency and throughput), and the same
// SQL sent straight to the database.
// A repeated query is answered from the offer search cache (at most 1 s old, while the offers read model is
// unchanged: docs/architecture.md); every query is also measured cold, each request a query the cache has
// not seen (an always-true `id` filter varied), and the CLI default's cold throughput.
const { createPlatformApp } = require('@rigmarket/http-kit');
const { IdentityModule } = require('@rigmarket/identity-2fa');
const { InProcessTransport } = require('@rigmarket/messaging');
const {
  MarketplaceModule,
  insertOfferRows,
  syntheticOfferRows,
  parseOfferQuery,
  offerSearchSql,
} = require('@rigmarket/marketplace-api');
const { QUERIES } = require('../offer-search');
const { stats, timeEach, throughput, throughputRow, freshDatabase, ms } = require('../lib');

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

const SHORT_NAMES = [
  'CLI default',
  'CLI defaults only',
  'bid, filtered, limit 5',
  'dph<1 cuda>=12.2, by dlperf_usd',
];

async function explain(db, body) {
  const { sql, params } = offerSearchSql(parseOfferQuery(body), 'marketplace', Date.now() / 1000, undefined);
  const rows = await db.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${sql}`, params);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

module.exports = async function search(mode, { short, sizes }) {
  // 1M offers on PostgreSQL only: PGlite in memory would hold the whole table in this process.
  const counts =
    sizes ?? (short ? [500] : mode === 'distributed' ? [10_000, 100_000, 1_000_000] : [10_000, 100_000]);
  const rows = [];
  const explains = [];
  for (const count of counts) {
    const { db, drop } = await freshDatabase(mode);
    const transport = new InProcessTransport();
    // Search needs a key, as every endpoint: identity's admin key, projected into the marketplace.
    const app = await createPlatformApp({
      db,
      transport,
      modules: [IdentityModule.forRoot({ adminKey: BENCH_KEY }), MarketplaceModule.forRoot()],
    });
    try {
      await app.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
      await keyReady(base);
      const offers = syntheticOfferRows(count, 42, Math.floor(Date.now() / 1000));
      for (let i = 0; i < offers.length; i += 10_000) {
        await db.transaction((sql) => insertOfferRows(sql, offers.slice(i, i + 10_000)));
      }
      await db.execute('ANALYZE marketplace.offers');
      const rounds = short ? 5 : count >= 100_000 ? 100 : 200;
      const healthz = () => fetch(`${base}/healthz`).then((r) => r.text());
      for (let i = 0; i < 20; i += 1) await healthz();
      const health = stats(await timeEach(rounds, healthz));
      const durationMs = short ? 300 : 3000;
      const healthRate = await throughput(healthz, { concurrency: 8, durationMs });
      let first = true;
      for (const [index, [name, body]] of Object.entries(QUERIES).entries()) {
        const send = async (query) => {
          const res = await fetch(`${base}/api/v0/bundles/`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${BENCH_KEY}`, 'Content-Type': 'application/json' },
            body: JSON.stringify(query),
          });
          if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${await res.text()}`);
          // Read as text, as the /healthz ceiling is: the server shares this process, so parsing ~110 KB
          // here would be counted against the search. The answers are checked to parse below.
          return res.text();
        };
        const post = () => send(body);
        let varied = 0;
        // Not cached: the same search with a filter every offer passes (`id >= -n`, n new each time), so the
        // plan and the answer are the search's own (a varied allocated_storage would leave the price indexes).
        const cold = () => send({ ...body, id: { gte: -1 - (varied++ % 1_000_000) } });
        for (let i = 0; i < 5; i += 1) {
          const answer = JSON.parse(await post());
          if (!Array.isArray(answer.offers)) throw new Error(`${name}: no offers array in the answer`);
        }
        const s = stats(await timeEach(rounds, post));
        const { sql, params } = offerSearchSql(
          parseOfferQuery(body),
          'marketplace',
          Date.now() / 1000,
          undefined,
        );
        const direct = stats(await timeEach(rounds, () => db.query(sql, params)));
        const row = {
          case: `search ${count.toLocaleString('en-US')} offers: ${SHORT_NAMES[index]}`,
          mode,
          p50: s.p50,
          p99: s.p99,
          ceiling: `same SQL direct p50 ${ms(direct.p50)} ms; /healthz p50 ${ms(health.p50)} ms`,
          ratio: direct.p50 / s.p50,
          goal: count === 100_000 && first && mode === 'distributed' ? 'p50 <= 5 ms, p99 <= 25 ms' : '',
        };
        // Cold: every request a query not cached (what the cache saves is the difference to the row above).
        const coldOne = stats(await timeEach(rounds, cold));
        const coldRow = {
          ...row,
          case: `${row.case}, cold`,
          p50: coldOne.p50,
          p99: coldOne.p99,
          ratio: direct.p50 / coldOne.p50,
        };
        if (first) {
          const rate = await throughput(post, { concurrency: 8, durationMs });
          rows.push(row);
          rows.push(
            throughputRow(
              {
                case: `search ${count.toLocaleString('en-US')} offers: CLI default, 8 concurrent`,
                mode,
                goal: count === 100_000 ? '>= 0.4' : '',
              },
              rate,
              healthRate,
            ),
          );
          rows.push({ ...coldRow, goal: '' });
          const coldRate = await throughput(cold, { concurrency: 8, durationMs });
          rows.push(
            throughputRow(
              {
                case: `search ${count.toLocaleString('en-US')} offers: CLI default, 8 concurrent, cold`,
                mode,
              },
              coldRate,
              healthRate,
            ),
          );
          first = false;
        } else rows.push(row, { ...coldRow, goal: '' });
        if (!short && count === Math.max(...counts) && mode === 'distributed') {
          explains.push(`${SHORT_NAMES[index]}:\n\n\`\`\`\n${await explain(db, body)}\n\`\`\``);
        }
      }
    } finally {
      await app.close();
      await transport.close();
      await db.close();
      await drop();
    }
  }
  const section =
    explains.length > 0
      ? `### EXPLAIN ANALYZE of the four searches over ${Math.max(...counts).toLocaleString('en-US')} offers (PostgreSQL)\n\n${explains.join('\n\n')}`
      : undefined;
  return { rows, section };
};
