import type { AccountCharged, CreditGranted } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { accountCreditProjection } from './projection';

describe('account_credit projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, accountCreditProjection);
  afterAll(() => spec.close());

  it("keeps each account's exact balance from the ledger", () =>
    spec
      .given([
        {
          streamId: 'ledger-2',
          type: 'CreditGranted',
          data: { userId: 2, amountMicros: 1_000_000 } as CreditGranted['data'],
        },
        {
          streamId: 'ledger-2',
          type: 'AccountCharged',
          data: { userId: 2, amountMicros: 1_250_000 } as AccountCharged['data'],
        },
      ])
      .when({ streamId: 'ledger-3', type: 'HostEarned', data: { userId: 3, amountMicros: 1 } as never })
      .then(`SELECT user_id, balance::text AS balance FROM instance_lifecycle.account_credit ORDER BY 1`, [
        { user_id: 2, balance: '-0.250000' },
        { user_id: 3, balance: '0.000001' },
      ]));
});
