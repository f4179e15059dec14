// Rebuild of a read model from its events (the marketplace ledger projection) vs reading the same events
// alone (the ceiling: what any rebuild must at least do). The events are seeded by a bulk INSERT ... SELECT
// (generate_series), not through commands, so that a million of them take seconds to write: 1,000,000 on
// PostgreSQL, 20,000 embedded (PGlite), 500 of each with --short; `--sizes N` sets the count. Their `hash`
// column gets a per-row sha256 that does not chain (the store's hash chain is not what this case measures:
// `rigmarket verify --chain` would report these rows as broken; a rebuild never reads the hashes).
const { currentSchemaVersion } = require('@rigmarket/contracts');
const { ContextRuntime, ManualClock } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { marketplaceContext } = require('@rigmarket/marketplace-api');
const { freshDatabase } = require('../lib');

const AT = '2026-05-01T12:00:00.000Z';
const PER_STREAM = 100;
const SEED_CHUNK = 100_000;

/** `total` CreditGranted events, PER_STREAM per ledger stream, written in transactions of SEED_CHUNK. */
async function seed(db, total) {
  const version = currentSchemaVersion('marketplace', 'CreditGranted');
  for (let from = 0; from < total; from += SEED_CHUNK) {
    const to = Math.min(total, from + SEED_CHUNK);
    await db.execute(
      `INSERT INTO marketplace.events
         (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at, hash)
       SELECT gen_random_uuid(), 'ledger-' || (i / $3 + 1), 'ledger', i % $3 + 1, 'CreditGranted', $4,
              jsonb_build_object('userId', i / $3 + 1, 'amountMicros', 1000000 + i % 7 * 250001, 'grantedBy', 1,
                                 'note', NULL, 'at', $5::text),
              '{"correlationId":"bench","causationId":"bench"}'::jsonb, $5::timestamptz,
              encode(sha256(convert_to(i::text, 'UTF8')), 'hex')
         FROM generate_series($1::int, $2::int - 1) AS i ORDER BY i`,
      [from, to, PER_STREAM, version, AT],
    );
  }
}

module.exports = async function rebuild(mode, { short, sizes }) {
  const { db, drop } = await freshDatabase(mode);
  const transport = new InProcessTransport();
  const runtime = await ContextRuntime.start(marketplaceContext, {
    db,
    transport,
    clock: new ManualClock(AT),
  });
  try {
    const total = sizes?.[0] ?? (short ? 500 : mode === 'distributed' ? 1_000_000 : 20_000);
    const s0 = performance.now();
    await seed(db, total);
    // Settled as a live store's table would be (hint bits set, statistics current), so that neither the
    // read below nor the rebuild pays for the bulk insert's first visit, whichever comes first.
    await db.execute('VACUUM (ANALYZE) marketplace.events');
    const seedMs = performance.now() - s0;
    const t0 = performance.now();
    let read = 0;
    let after = '0';
    for (;;) {
      const batch = await runtime.store.readAll(db, after, 5000, ['ledger'], false); // the rebuild's own read
      if (batch.length === 0) break;
      read += batch.length;
      after = batch[batch.length - 1].globalPosition;
    }
    const readMs = performance.now() - t0;
    const t1 = performance.now();
    const applied = await runtime.rebuild('ledger');
    const rebuildMs = performance.now() - t1;
    const [{ entries }] = await db.query('SELECT count(*)::int AS entries FROM marketplace.ledger_entries');
    if (entries !== total || applied !== total)
      throw new Error(`rebuild applied ${applied} events, ${entries} ledger entries; expected ${total}`);
    process.stderr.write(
      `bench: rebuild (${mode}) seeded ${total} events in ${Math.round(seedMs)} ms, read in ${Math.round(readMs)} ms, rebuilt in ${Math.round(rebuildMs)} ms\n`,
    );
    return [
      {
        case: `rebuild the ledger read model from ${applied.toLocaleString('en-US')} events`,
        mode,
        p50: rebuildMs,
        perSec: (applied * 1000) / rebuildMs,
        ceiling: `reading the ${read.toLocaleString('en-US')} events alone (pages of 5,000): ${Math.round(readMs)} ms (${Math.round((read * 1000) / readMs).toLocaleString('en-US')} ev/s)`,
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
