import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { instanceDepositsProjection } from './projection';

const event = (
  type: 'InstancePrepaid' | 'DepositDrawn' | 'DepositRefunded',
  userId: number,
  instanceId: number,
  amountMicros: number,
) => ({ streamId: `ledger-${userId}`, type, data: { userId, instanceId, amountMicros, at: AT } });

describe('instance_deposits projection (show deposit)', () => {
  const spec = projectionSpec(marketplaceContext, instanceDepositsProjection);
  afterAll(() => spec.close());

  it('keeps what each instance was prepaid, what its charges drew and what its destroy refunded', () =>
    spec
      .given([
        event('InstancePrepaid', 7, 100, 10_000_000),
        event('DepositDrawn', 7, 100, 1_250_000),
        event('InstancePrepaid', 7, 100, 2_500_000),
        event('InstancePrepaid', 8, 200, 1_000_000),
      ])
      .when(event('DepositRefunded', 7, 100, 11_250_000))
      .then(
        `SELECT instance_id, user_id, deposit::text, prepaid::text, drawn::text, refunded::text, closed
           FROM marketplace.instance_deposits ORDER BY 1`,
        [
          {
            instance_id: 100,
            user_id: 7,
            deposit: '0.000000',
            prepaid: '12.500000',
            drawn: '1.250000',
            refunded: '11.250000',
            closed: true,
          },
          {
            instance_id: 200,
            user_id: 8,
            deposit: '1.000000',
            prepaid: '1.000000',
            drawn: '0.000000',
            refunded: '0.000000',
            closed: false,
          },
        ],
      ));
});
