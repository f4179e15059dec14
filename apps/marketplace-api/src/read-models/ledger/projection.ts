import { type LedgerEvent, ledgerDeltaMicros, microsToDecimal } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const ledgerProjection = defineProjection<LedgerEvent>({
  name: 'ledger',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.ledger_entries`, `${SCHEMA}.balances`],
  eventTypes: ['CreditGranted', 'AccountCharged', 'HostEarned', 'CreditExhausted'],
  async apply(sql, event) {
    const signed = ledgerDeltaMicros(event);
    const entry = async (
      kind: string,
      extra: { instanceId?: number; machineId?: number; note?: string | null; start?: string; end?: string },
    ) => {
      await sql.execute(
        `INSERT INTO ${SCHEMA}.ledger_entries (stream_id, position, user_id, kind, amount, instance_id, machine_id, note, period_start, period_end, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          event.streamId,
          event.streamPosition,
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
    }
  },
});
