import {
  type AccountCharged,
  type CreditGranted,
  type HostEarned,
  ledgerDeltaMicros,
  microsToDecimal,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { USER_CREDIT_TABLE as TABLE } from './queries';

/** Each account's credit, summed from marketplace's ledger by the same rule (ledgerDeltaMicros) as its balances. */
export const userCreditProjection = defineProjection<CreditGranted | AccountCharged | HostEarned>({
  name: 'user_credit',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [TABLE],
  eventTypes: ['CreditGranted', 'AccountCharged', 'HostEarned'],
  async apply(sql, event) {
    const delta = ledgerDeltaMicros(event);
    if (delta === 0) return;
    await sql.execute(
      `INSERT INTO ${TABLE} (user_id, credit) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET credit = ${TABLE}.credit + EXCLUDED.credit`,
      [event.data.userId, microsToDecimal(delta)],
    );
  },
});
