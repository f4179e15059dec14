// Background work against requests, embedded: (1) the timer-gap probe while a loop runs awaited PGlite queries
// in one transaction (billing, a reactor drain, a rebuild do this), and (2) billing against a long ledger
// (ms per command and events read, for two history lengths: equal figures = cost independent of history).
const { Database } = require('@rigmarket/event-sourcing');
const { eventLoopGap } = require('../event-loop-gap');
const { ledgerFold } = require('../ledger-fold');

module.exports = async function background(mode, { short }) {
  const rows = [];
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  try {
    const queries = short ? 200 : 2000;
    await eventLoopGap(db, 20);
    const gap = await eventLoopGap(db, queries);
    rows.push({
      case: `timer-gap probe: ${queries} awaited queries in one transaction`,
      mode,
      p50: undefined,
      p99: gap.maxGapMs,
      perSec: (queries * 1000) / gap.elapsedMs,
      ceiling: `${gap.ticks} ticks of a 1 ms timer meanwhile (p99 column: the longest gap)`,
      goal: 'longest gap <= 50 ms',
    });
  } finally {
    await db.close();
  }
  const histories = short ? [200] : [2000, 8000];
  const results = [];
  for (const history of histories) results.push(await ledgerFold(history, short ? 5 : 20));
  for (const r of results) {
    rows.push({
      case: `billing: RecordEarning on a ledger of ${r.history.toLocaleString('en-US')} events`,
      mode,
      p50: r.p50Ms,
      perSec: 1000 / r.p50Ms,
      ceiling: `events read per command: at most ${r.maxReadAfterFirst} (first after the history: ${r.firstRead}, ${r.firstMs.toFixed(0)} ms)`,
      ratio: results[0].p50Ms / r.p50Ms,
      goal: 'ratio to the shortest history ~1',
    });
  }
  return rows;
};
