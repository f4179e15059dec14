import type { EventEnvelope, LedgerEvent } from '@rigmarket/contracts';
import type { Migration, Projection, Sql } from '@rigmarket/event-sourcing';

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

export const ledgerProjection: Projection = {
  name: 'ledger',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.ledger_entries`, `${SCHEMA}.balances`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as LedgerEvent;
    const entry = async (
      kind: string,
      signed: number,
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
          Math.abs(signed),
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
         ON CONFLICT (user_id) DO UPDATE SET balance = ROUND((${SCHEMA}.balances.balance + EXCLUDED.balance)::numeric, 6)::float8,
           exhausted = ${SCHEMA}.balances.exhausted AND (${SCHEMA}.balances.balance + EXCLUDED.balance) <= 0`,
        [event.data.userId, signed],
      );
    };
    switch (event.type) {
      case 'CreditGranted':
        await entry('credit', event.data.amount, { note: event.data.note });
        return;
      case 'AccountCharged':
        await entry(`charge_${event.data.kind}`, -event.data.amount, {
          instanceId: event.data.instanceId,
          machineId: event.data.machineId,
          start: event.data.periodStart,
          end: event.data.periodEnd,
        });
        return;
      case 'HostEarned':
        await entry('earning', event.data.amount, {
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
