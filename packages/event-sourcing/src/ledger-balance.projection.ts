import {
  type AccountCharged,
  type CreditGranted,
  type CreditReceived,
  type CreditTransferred,
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
  return defineProjection<CreditGranted | AccountCharged | HostEarned | CreditTransferred | CreditReceived>({
    name,
    version: 1,
    sources: [{ context: 'marketplace', streamType: 'ledger' }],
    tables: [table],
    eventTypes: ['CreditGranted', 'AccountCharged', 'HostEarned', 'CreditTransferred', 'CreditReceived'],
    async apply(sql, event) {
      const delta = ledgerDeltaMicros(event);
      if (delta === 0) return;
      await sql.execute(
        `INSERT INTO ${table} (user_id, ${column}) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET ${column} = ${table}.${column} + EXCLUDED.${column}`,
        [event.data.userId, microsToDecimal(delta)],
      );
    },
  });
}
