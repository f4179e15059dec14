// Billing against a long ledger: a host with N earnings already, then RecordEarning commands as the
// host-earnings reactor runs them. Reports ms per command and the events each command read and folded.
// Run: npm run build && node bench/ledger-fold.js [N...] (embedded, PGlite in memory)
require('reflect-metadata');
const { ContextRuntime, Database, ManualClock } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { marketplaceContext } = require('@rigmarket/marketplace-api');
const { ledgerDecider } = require('../apps/marketplace-api/dist/ledger/ledger.decider');

const AT = '2026-05-01T12:00:00.000Z';
const metadata = { correlationId: 'bench', causationId: 'bench' };

async function ledgerFold(history, commands = 20) {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  const transport = new InProcessTransport();
  const runtime = await ContextRuntime.start(marketplaceContext, {
    db,
    transport,
    clock: new ManualClock(AT),
  });
  try {
    const stream = `ledger-${history}`;
    const earned = (n) => ({
      type: 'HostEarned',
      data: {
        userId: history,
        machineId: 1,
        instanceId: n % 460,
        amountMicros: 10_000,
        at: AT,
        chargeId: `c-${n}`,
      },
    });
    for (let from = 0; from < history; from += 500) {
      const n = Math.min(500, history - from);
      await db.transaction((sql) =>
        runtime.store.append(
          sql,
          stream,
          from,
          Array.from({ length: n }, (_, i) => earned(from + i)),
          metadata,
          new Date(AT),
        ),
      );
    }
    const times = [];
    const reads = [];
    for (let i = 0; i < commands; i += 1) {
      const command = {
        type: 'RecordEarning',
        at: AT,
        userId: history,
        chargeId: `new-${i}`,
        instanceId: 1,
        machineId: 1,
        amountMicros: 10_000,
        alreadyEarned: false,
      };
      const start = performance.now();
      const result = await runtime.runner.handle(
        stream,
        ledgerDecider,
        (state) => ledgerDecider.decide(command, state),
        metadata,
      );
      times.push(performance.now() - start);
      reads.push(result.eventsRead ?? history + i);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return {
      history,
      firstMs: times[0],
      p50Ms: sorted[Math.floor(sorted.length / 2)],
      maxReadAfterFirst: Math.max(...reads.slice(1)),
      firstRead: reads[0],
    };
  } finally {
    await runtime.stop();
    await transport.close();
    await db.close();
  }
}

module.exports = { ledgerFold };

if (require.main === module) {
  const sizes = process.argv
    .slice(2)
    .filter((a) => /^\d+$/.test(a))
    .map(Number);
  (async () => {
    for (const n of sizes.length ? sizes : [2000, 8000]) {
      const r = await ledgerFold(n);
      console.log(
        `history ${n}: first command ${r.firstMs.toFixed(1)} ms (read ${r.firstRead}), then p50 ${r.p50Ms.toFixed(1)} ms per command, at most ${r.maxReadAfterFirst} events read`,
      );
    }
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
