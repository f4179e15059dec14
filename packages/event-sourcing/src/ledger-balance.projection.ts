import {
  type AccountCharged,
  type CreditGranted,
  type CreditReceived,
  type CreditTransferred,
  type DepositEvent,
  type HostEarned,
  ledgerDeltaMicros,
  microsToDecimal,
} from '@rigmarket/contracts';
import { type Projection, defineProjection } from './projections';

/**
 * Each account's balance summed from marketplace's ledger events by the ledger's own rule
 * (ledgerDeltaMicros), for contexts that need credit without asking marketplace: identity shows it,
 * instance-lifecycle refuses rentals without it. `table` has `user_id` and the numeric `column`.
 */
export function ledgerBalanceProjection(name: string, table: string, column: string): Projection {
  return defineProjection<
    CreditGranted | AccountCharged | HostEarned | CreditTransferred | CreditReceived | DepositEvent
  >({
    name,
    version: 1,
    sources: [{ context: 'marketplace', streamType: 'ledger' }],
    tables: [table],
    eventTypes: [
      'CreditGranted',
      'AccountCharged',
      'HostEarned',
      'CreditTransferred',
      'CreditReceived',
      'InstancePrepaid',
      'DepositDrawn',
      'DepositRefunded',
    ],
    async apply(sql, event) {
      const delta = ledgerDeltaMicros(event);
      if (delta === 0) return;
      await sql.execute(
        `INSERT INTO ${table} (user_id, ${column}) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET ${column} = ${table}.${column} + EXCLUDED.${column}`,
        [event.data.userId, microsToDecimal(delta)],
      );
    },
    /** A batch (a billing run's charges, a host's earnings): one upsert, the deltas summed per account in SQL. */
    async applyBatch(sql, events) {
      const moving = events.filter((e) => ledgerDeltaMicros(e) !== 0);
      if (moving.length === 0) return;
      await sql.execute(
        `INSERT INTO ${table} (user_id, ${column})
         SELECT d.user_id, sum(d.delta) FROM unnest($1::bigint[], $2::numeric[]) AS d (user_id, delta) GROUP BY d.user_id
         ON CONFLICT (user_id) DO UPDATE SET ${column} = ${table}.${column} + EXCLUDED.${column}`,
        [moving.map((e) => e.data.userId), moving.map((e) => microsToDecimal(ledgerDeltaMicros(e)))],
      );
    },
  });
}
