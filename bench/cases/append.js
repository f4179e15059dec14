// Event append through the event store vs raw INSERTs of the same rows into the same table.
const { randomUUID } = require('node:crypto');
const { EventStore, coreMigrations, runMigrations } = require('@rigmarket/event-sourcing');
const { stats, timeEach, freshDatabase } = require('../lib');

const SCHEMA = 'marketplace';
const metadata = { correlationId: 'bench', causationId: 'bench' };
// A private event (no outbox row), so both sides write exactly the events rows.
const event = (n) => ({
  type: 'MachineHeartbeat',
  data: { machineId: n, at: '2026-05-01T12:00:00.000Z', reliability: 0.99 },
});

module.exports = async function append(mode, { short }) {
  const { db, drop } = await freshDatabase(mode);
  try {
    await runMigrations(db, SCHEMA, coreMigrations);
    const store = new EventStore('marketplace', SCHEMA);
    const singles = short ? 50 : 1000;
    const batches = short ? 3 : 20;
    const at = new Date();
    const rawRow = (i, stream, position) => [
      randomUUID(),
      stream,
      'machine',
      position,
      'MachineHeartbeat',
      1,
      JSON.stringify(event(i).data),
      JSON.stringify(metadata),
      at.toISOString(),
    ];
    const rawInsert = (rows) => {
      const values = rows.map(
        (_, r) => `(${Array.from({ length: 9 }, (_, c) => `$${r * 9 + c + 1}`).join(', ')})`,
      );
      return [
        `INSERT INTO ${SCHEMA}.events (event_id, stream_id, stream_type, stream_position, type, schema_version, data, metadata, occurred_at)
         VALUES ${values.join(', ')}`,
        rows.flat(),
      ];
    };
    const rows = [];
    // 1 event per transaction
    const one = await timeEach(singles, (i) =>
      db.transaction((sql) => store.append(sql, `machine-a${i}`, 0, [event(i)], metadata, at)),
    );
    const oneRaw = await timeEach(singles, (i) =>
      db.transaction((sql) => sql.execute(...rawInsert([rawRow(i, `machine-r${i}`, 1)]))),
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
    const hundred = await timeEach(batches, (b) =>
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
    );
    const hundredRaw = await timeEach(batches, (b) =>
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
    return rows;
  } finally {
    await db.close();
    await drop();
  }
};
