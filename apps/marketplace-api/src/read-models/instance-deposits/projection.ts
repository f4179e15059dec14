import { type DepositEvent, microsToDecimal } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/**
 * Each prepaid instance's deposit (`show deposit`): prepaid in total, drawn by its charges, refunded when it
 * was destroyed, and what is left. Amounts are exact decimal dollars, from the events' micros.
 */
export const instanceDepositsProjection = defineProjection<DepositEvent>({
  name: 'instance_deposits',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.instance_deposits`],
  eventTypes: ['InstancePrepaid', 'DepositDrawn', 'DepositRefunded'],
  async apply(sql, event) {
    const amount = microsToDecimal(event.data.amountMicros);
    const [prepaid, drawn, refunded] =
      event.type === 'InstancePrepaid'
        ? [amount, '0', '0']
        : event.type === 'DepositDrawn'
          ? ['0', amount, '0']
          : ['0', '0', amount];
    await sql.execute(
      `INSERT INTO ${SCHEMA}.instance_deposits AS d (instance_id, user_id, deposit, prepaid, drawn, refunded, closed)
       VALUES ($1, $2, $3::numeric - $4::numeric - $5::numeric, $3, $4, $5, $6)
       ON CONFLICT (instance_id) DO UPDATE SET
         deposit = d.deposit + EXCLUDED.deposit,
         prepaid = d.prepaid + EXCLUDED.prepaid,
         drawn = d.drawn + EXCLUDED.drawn,
         refunded = d.refunded + EXCLUDED.refunded,
         closed = d.closed OR EXCLUDED.closed`,
      [event.data.instanceId, event.data.userId, prepaid, drawn, refunded, event.type === 'DepositRefunded'],
    );
  },
});
