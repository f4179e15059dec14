import type { AccountCharged, CreditGranted, HostEarned } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { userCreditProjection } from './projection';

const granted = (userId: number, amountMicros: number) => ({
  streamId: `ledger-${userId}`,
  type: 'CreditGranted' as const,
  data: { userId, amountMicros } as CreditGranted['data'],
});

describe('user_credit projection', () => {
  const spec = projectionSpec(identityContext, userCreditProjection);
  afterAll(() => spec.close());

  it("sums an account's grants and earnings less its charges, exactly", () =>
    spec
      .given([
        granted(2, 100_000),
        granted(2, 200_000),
        {
          streamId: 'ledger-2',
          type: 'AccountCharged',
          data: { userId: 2, amountMicros: 70_000 } as AccountCharged['data'],
        },
        {
          streamId: 'ledger-7',
          type: 'HostEarned',
          data: { userId: 7, amountMicros: 70_000 } as HostEarned['data'],
        },
      ])
      .when({ streamId: 'ledger-2', type: 'CreditExhausted', data: { userId: 2 } as never })
      .then(`SELECT user_id, credit::text AS credit FROM identity.user_credit ORDER BY 1`, [
        { user_id: 2, credit: '0.230000' },
        { user_id: 7, credit: '0.070000' },
      ]));
});
