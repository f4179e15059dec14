import {
  type AccountCharged,
  type CreditGranted,
  type HostEarned,
  ledgerDeltaMicros,
  microsToDecimal,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { ACCOUNT_CREDIT_TABLE as TABLE } from './queries';

/** Each account's balance as instance-lifecycle knows it (renting and starting need credit): the ledger's events. */
export const accountCreditProjection = defineProjection<CreditGranted | AccountCharged | HostEarned>({
  name: 'account_credit',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [TABLE],
  eventTypes: ['CreditGranted', 'AccountCharged', 'HostEarned'],
  async apply(sql, event) {
    const delta = ledgerDeltaMicros(event);
    if (delta === 0) return;
    await sql.execute(
      `INSERT INTO ${TABLE} (user_id, balance) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET balance = ${TABLE}.balance + EXCLUDED.balance`,
      [event.data.userId, microsToDecimal(delta)],
    );
  },
});
