// Rebuild of a read model from its events (the marketplace ledger projection) vs reading the same events
// alone (the ceiling: what any rebuild must at least do).
const { ContextRuntime, ManualClock } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { marketplaceContext } = require('@rigmarket/marketplace-api');
const { freshDatabase } = require('../lib');

const AT = '2026-05-01T12:00:00.000Z';
const metadata = { correlationId: 'bench', causationId: 'bench' };

module.exports = async function rebuild(mode, { short }) {
  const { db, drop } = await freshDatabase(mode);
  const transport = new InProcessTransport();
  const runtime = await ContextRuntime.start(marketplaceContext, {
    db,
    transport,
    clock: new ManualClock(AT),
  });
  try {
    const total = short ? 500 : 20_000;
    const perStream = 100;
    for (let from = 0; from < total; from += perStream) {
      const user = from / perStream + 1;
      const events = Array.from({ length: perStream }, () => ({
        type: 'CreditGranted',
        data: { userId: user, amountMicros: 1_000_000, grantedBy: 1, note: null, at: AT },
      }));
      await db.transaction((sql) =>
        runtime.store.append(sql, `ledger-${user}`, 0, events, metadata, new Date(AT)),
      );
    }
    const t0 = performance.now();
    let read = 0;
    await db.transaction(async (sql) => {
      let after = '0';
      for (;;) {
        const batch = await runtime.store.readAll(sql, after, 500, ['ledger']);
        if (batch.length === 0) break;
        read += batch.length;
        after = batch[batch.length - 1].globalPosition;
      }
    });
    const readMs = performance.now() - t0;
    const t1 = performance.now();
    const applied = await runtime.rebuild('ledger');
    const rebuildMs = performance.now() - t1;
    return [
      {
        case: `rebuild the ledger read model from ${applied.toLocaleString('en-US')} events`,
        mode,
        p50: rebuildMs,
        perSec: (applied * 1000) / rebuildMs,
        ceiling: `reading the ${read.toLocaleString('en-US')} events alone: ${Math.round(readMs)} ms (${Math.round((read * 1000) / readMs).toLocaleString('en-US')} ev/s)`,
        ratio: readMs / rebuildMs,
        goal: '1M events <= 60 s (>= 16,700 ev/s)',
      },
    ];
  } finally {
    await runtime.stop();
    await transport.close();
    await db.close();
    await drop();
  }
};
