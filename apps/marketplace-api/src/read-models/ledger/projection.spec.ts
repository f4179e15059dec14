import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { ledgerProjection } from './projection';

describe('ledger projection (entries and balances)', () => {
  const spec = projectionSpec(marketplaceContext, ledgerProjection);
  afterAll(() => spec.close());

  it('records each entry and keeps the balance exact, exhausted until credit brings it above zero', () =>
    spec
      .given([
        {
          streamId: 'ledger-2',
          type: 'CreditGranted',
          data: { userId: 2, amountMicros: 100_000, grantedBy: 1, note: 'demo', at: AT },
        },
        {
          streamId: 'ledger-2',
          type: 'AccountCharged',
          data: {
            userId: 2,
            instanceId: 9,
            machineId: 7,
            kind: 'gpu',
            amountMicros: 100_000,
            periodStart: AT,
            periodEnd: AT,
            at: AT,
            hostId: 3,
          },
        },
        { streamId: 'ledger-2', type: 'CreditExhausted', data: { userId: 2, balanceMicros: 0, at: AT } },
        {
          streamId: 'ledger-3',
          type: 'HostEarned',
          data: { userId: 3, machineId: 7, instanceId: 9, amountMicros: 100_000, at: AT },
        },
      ])
      .when({
        streamId: 'ledger-2',
        type: 'CreditGranted',
        data: { userId: 2, amountMicros: 10_000, grantedBy: 1, note: null, at: AT },
      })
      .then(
        `SELECT b.user_id, b.balance::text AS balance, b.exhausted,
                (SELECT json_agg(e.kind || ' ' || e.amount::text ORDER BY e.position) FROM marketplace.ledger_entries e WHERE e.user_id = b.user_id) AS entries
           FROM marketplace.balances b ORDER BY 1`,
        [
          {
            user_id: 2,
            balance: '0.010000',
            exhausted: false,
            entries: ['credit 0.100000', 'charge_gpu 0.100000', 'credit 0.010000'],
          },
          { user_id: 3, balance: '0.100000', exhausted: false, entries: ['earning 0.100000'] },
        ],
      ));

  it('records a transfer as an entry out of the sender and one into the recipient, balances moved by it', () =>
    spec
      .given([
        {
          streamId: 'ledger-2',
          type: 'CreditGranted',
          data: { userId: 2, amountMicros: 5_000_000, grantedBy: 1, note: null, at: AT },
        },
        {
          streamId: 'ledger-2',
          type: 'CreditTransferred',
          data: { userId: 2, recipientId: 4, amountMicros: 1_250_000, at: AT },
        },
      ])
      .when({
        streamId: 'ledger-4',
        type: 'CreditReceived',
        data: { userId: 4, senderId: 2, amountMicros: 1_250_000, transferId: 'e-1', at: AT },
      })
      .then(
        `SELECT b.user_id, b.balance::text AS balance,
                (SELECT json_agg(e.kind || ' ' || e.amount::text || ' ' || coalesce(e.note, '') ORDER BY e.position) FROM marketplace.ledger_entries e WHERE e.user_id = b.user_id) AS entries
           FROM marketplace.balances b ORDER BY 1`,
        [
          {
            user_id: 2,
            balance: '3.750000',
            entries: ['credit 5.000000 ', 'transfer_out 1.250000 to account 4'],
          },
          { user_id: 4, balance: '1.250000', entries: ['transfer_in 1.250000 from account 2'] },
        ],
      ));
});
