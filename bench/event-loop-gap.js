// Timer-gap probe: how long can a background chain of database queries keep the event loop from serving
// anything else? A 1 ms interval timer records the longest gap between its ticks while a "background loop"
// runs N awaited queries (one transaction, as a billing run or rebuild would).
// Run: npm run build && node bench/event-loop-gap.js [queries] [--embedded]
require('reflect-metadata');
const { Database } = require('@rigmarket/event-sourcing');

async function probe(work) {
  let ticks = 0;
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks += 1;
  }, 1);
  const start = performance.now();
  await work();
  const elapsed = performance.now() - start;
  maxGap = Math.max(maxGap, performance.now() - last);
  clearInterval(timer);
  return { ticks, maxGapMs: maxGap, elapsedMs: elapsed };
}

async function eventLoopGap(db, queries) {
  await db
    .execute('CREATE TEMP TABLE IF NOT EXISTS probe_t (id INT PRIMARY KEY, v TEXT)')
    .catch(() => undefined);
  return probe(() =>
    db.transaction(async (sql) => {
      for (let i = 0; i < queries; i += 1) await sql.query('SELECT $1::int + 1 AS n', [i]);
    }),
  );
}

module.exports = { probe, eventLoopGap };

if (require.main === module) {
  const queries = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 2000);
  (async () => {
    const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await eventLoopGap(db, 50);
    const r = await eventLoopGap(db, queries);
    console.log(
      `embedded, ${queries} awaited queries: ${r.ticks} timer ticks, longest gap ${r.maxGapMs.toFixed(1)} ms, ${r.elapsedMs.toFixed(0)} ms in all`,
    );
    await db.close();
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
