import {
  type EventEnvelope,
  type LedgerEvent,
  ledgerDeltaMicros,
  microsToDecimal,
} from '@rigmarket/contracts';
import { type Migration, type Projection, type Sql, replayProjection } from '@rigmarket/event-sourcing';

const SCHEMA = 'marketplace';

export const ledgerReadModelsMigration: Migration = {
  id: '0005-ledger',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.ledger_entries (
        stream_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        amount DOUBLE PRECISION NOT NULL,
        instance_id INTEGER,
        machine_id INTEGER,
        note TEXT,
        period_start TIMESTAMPTZ,
        period_end TIMESTAMPTZ,
        at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (stream_id, position)
      )`);
    await sql.execute(`CREATE INDEX ledger_entries_by_user ON ${s}.ledger_entries (user_id, kind, at)`);
    await sql.execute(
      `CREATE TABLE ${s}.balances (user_id INTEGER PRIMARY KEY, balance DOUBLE PRECISION NOT NULL, exhausted BOOLEAN NOT NULL DEFAULT FALSE)`,
    );
  },
};

/**
 * Money columns become exact: NUMERIC(20, 6) dollars (integer micros on the events). The old DOUBLE PRECISION
 * rows are replaced by a replay of the ledger, whose version 1 events are upcast to micros (an amount beyond
 * the limits is voided, see contracts' money.ts), so nothing of the old float sums survives.
 */
export const exactLedgerMigration: Migration = {
  id: '0010-ledger-exact-money',
  async up(sql, s) {
    await sql.execute(`DELETE FROM ${s}.ledger_entries`);
    await sql.execute(`DELETE FROM ${s}.balances`);
    await sql.execute(`ALTER TABLE ${s}.ledger_entries ALTER COLUMN amount TYPE NUMERIC(20, 6)`);
    await sql.execute(`ALTER TABLE ${s}.balances ALTER COLUMN balance TYPE NUMERIC(20, 6)`);
    await replayProjection(sql, s, ledgerProjection);
  },
};

export const ledgerProjection: Projection = {
  name: 'ledger',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.ledger_entries`, `${SCHEMA}.balances`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as LedgerEvent;
    const signed = ledgerDeltaMicros(event);
    const entry = async (
      kind: string,
      extra: { instanceId?: number; machineId?: number; note?: string | null; start?: string; end?: string },
    ) => {
      await sql.execute(
        `INSERT INTO ${SCHEMA}.ledger_entries (stream_id, position, user_id, kind, amount, instance_id, machine_id, note, period_start, period_end, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          envelope.streamId,
          envelope.streamPosition,
          event.data.userId,
          kind,
          microsToDecimal(Math.abs(signed)),
          extra.instanceId ?? null,
          extra.machineId ?? null,
          extra.note ?? null,
          extra.start ?? null,
          extra.end ?? null,
          event.data.at,
        ],
      );
      await sql.execute(
        `INSERT INTO ${SCHEMA}.balances (user_id, balance) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET balance = ${SCHEMA}.balances.balance + EXCLUDED.balance,
           exhausted = ${SCHEMA}.balances.exhausted AND (${SCHEMA}.balances.balance + EXCLUDED.balance) <= 0`,
        [event.data.userId, microsToDecimal(signed)],
      );
    };
    switch (event.type) {
      case 'CreditGranted':
        await entry('credit', { note: event.data.note });
        return;
      case 'AccountCharged':
        await entry(`charge_${event.data.kind}`, {
          instanceId: event.data.instanceId,
          machineId: event.data.machineId,
          start: event.data.periodStart,
          end: event.data.periodEnd,
        });
        return;
      case 'HostEarned':
        await entry('earning', {
          instanceId: event.data.instanceId,
          machineId: event.data.machineId,
        });
        return;
      case 'CreditExhausted':
        await sql.execute(`UPDATE ${SCHEMA}.balances SET exhausted = TRUE WHERE user_id = $1`, [
          event.data.userId,
        ]);
        return;
      default:
        return;
    }
  },
};
