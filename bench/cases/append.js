// Event append through the event store vs raw INSERTs of the same rows into the same table. Since the
// hash chain (core-0005) the raw rows carry a hash too (a constant: the raw side does no hashing and takes
// no chain lock); on a store from before it they do not, so the case also runs against an older build.
const { randomUUID } = require('node:crypto');
const { EventStore, coreMigrations, runMigrations } = require('@rigmarket/event-sourcing');
const { stats, throughput, timeAlternately, freshDatabase } = require('../lib');

const SCHEMA = 'marketplace';
const metadata = { correlationId: 'bench', causationId: 'bench' };
// A private event (a type no context publishes: no outbox row), so both sides write exactly the events rows.
// Until 2026-11-26 this was MachineHeartbeat, which is public: the store side also wrote an outbox row (with
// the whole envelope as JSONB) per event that the raw side did not.
const TYPE = 'BenchAppended';
const event = (n) => ({
  type: TYPE,
  data: { machineId: n, at: '2026-05-01T12:00:00.000Z', reliability: 0.99 },
});

module.exports = async function append(mode, { short }) {
  const { db, drop } = await freshDatabase(mode);
  try {
    await runMigrations(db, SCHEMA, coreMigrations);
    const store = new EventStore('marketplace', SCHEMA);
    const chained =
      (
        await db.query(
          `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'events' AND column_name = 'hash'`,
          [SCHEMA],
        )
      ).length > 0;
    const columns = chained ? 10 : 9;
    const singles = short ? 50 : 1000;
    const batches = short ? 3 : 20;
    const at = new Date();
    const rawRow = (i, stream, position) => [
      randomUUID(),
      stream,
      'machine',
      position,
      TYPE,
      1,
      JSON.stringify(event(i).data),
      JSON.stringify(metadata),
      at.toISOString(),
      ...(chained ? ['0'.repeat(64)] : []),
    ];
    const rawInsert = (rows) => {
      const values = rows.map(
        (_, r) => `(${Array.from({ length: columns }, (_, c) => `$${r * columns + c + 1}`).join(', ')})`,
      );
      return [
        `INSERT INTO ${SCHEMA}.events (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at${chained ? ', hash' : ''})
         VALUES ${values.join(', ')}`,
        rows.flat(),
      ];
    };
    const rows = [];
    // Both sides warmed up first, untimed (the first side to run would otherwise pay for compiling the
    // driver's and the engine's paths alone).
    const warm = short ? 5 : 50;
    for (let i = 0; i < warm; i += 1) {
      await db.transaction((sql) => store.append(sql, `machine-w${i}`, 0, [event(i)], metadata, at));
      await db.transaction((sql) => sql.execute(...rawInsert([rawRow(i, `machine-v${i}`, 1)])));
    }
    // 1 event per transaction
    const [one, oneRaw] = await timeAlternately(
      singles,
      (i) => db.transaction((sql) => store.append(sql, `machine-a${i}`, 0, [event(i)], metadata, at)),
      (i) => db.transaction((sql) => sql.execute(...rawInsert([rawRow(i, `machine-r${i}`, 1)]))),
    );
    const s1 = stats(one);
    const r1 = stats(oneRaw);
    rows.push({
      case: 'append, 1 event per transaction',
      mode,
      p50: s1.p50,
      p99: s1.p99,
      perSec: 1000 / s1.mean,
      ceiling: `raw INSERT ${Math.round(1000 / r1.mean)}/s`,
      ratio: r1.mean / s1.mean,
      goal: '>= 0.5',
    });
    // 100 events per transaction (one stream)
    const [hundred, hundredRaw] = await timeAlternately(
      batches,
      (b) =>
        db.transaction((sql) =>
          store.append(
            sql,
            `machine-b${b}`,
            0,
            Array.from({ length: 100 }, (_, i) => event(i)),
            metadata,
            at,
          ),
        ),
      (b) =>
        db.transaction((sql) =>
          sql.execute(...rawInsert(Array.from({ length: 100 }, (_, i) => rawRow(i, `machine-s${b}`, i + 1)))),
        ),
    );
    const s100 = stats(hundred);
    const r100 = stats(hundredRaw);
    rows.push({
      case: 'append, 100 events per transaction',
      mode,
      p50: s100.p50,
      p99: s100.p99,
      perSec: (100 * 1000) / s100.mean,
      ceiling: `one 100-row INSERT ${Math.round((100 * 1000) / r100.mean)} rows/s`,
      ratio: r100.mean / s100.mean,
      goal: '>= 0.5',
    });
    // 8 transactions at once, 1 event each, in one context: the chain head lock makes them take turns
    // from append to commit (PostgreSQL only: PGlite runs one transaction at a time anyway)
    if (mode === 'distributed') {
      const duration = short ? 300 : 5000;
      const many = await throughput(
        (i) => db.transaction((sql) => store.append(sql, `machine-c${i}`, 0, [event(i)], metadata, at)),
        { concurrency: 8, durationMs: duration },
      );
      const manyRaw = await throughput(
        (i) => db.transaction((sql) => sql.execute(...rawInsert([rawRow(i, `machine-q${i}`, 1)]))),
        { concurrency: 8, durationMs: duration },
      );
      rows.push({
        case: 'append, 1 event per transaction, 8 concurrent',
        mode,
        p50: many.p50,
        p99: many.p99,
        perSec: many.perSec,
        ceiling: `raw INSERT ${Math.round(manyRaw.perSec)}/s (8 concurrent)`,
        ratio: many.perSec / manyRaw.perSec,
        goal: '',
      });
    }
    return rows;
  } finally {
    await db.close();
    await drop();
  }
};
