import type { LedgerEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { LedgerErrors, ledgerDecider, usageCharge } from './ledger.decider';

const AT = '2026-05-01T12:00:00.000Z';
const granted = (amount: number): LedgerEvent => ({ type: 'CreditGranted', data: { userId: 2, amount, grantedBy: 1, note: null, at: AT } });
const charge = (amount: number) => ({
  type: 'Charge' as const,
  at: AT,
  userId: 2,
  instanceId: 9,
  machineId: 42,
  kind: 'gpu' as const,
  amount,
  periodStart: '2026-05-01T11:00:00.000Z',
  periodEnd: AT,
});
const charged = (amount: number): LedgerEvent => ({
  type: 'AccountCharged',
  data: { userId: 2, instanceId: 9, machineId: 42, kind: 'gpu', amount, periodStart: '2026-05-01T11:00:00.000Z', periodEnd: AT, at: AT },
});
const spec = deciderSpec(ledgerDecider);

describe('ledger decider', () => {
  it('grants credit; refuses a zero or negative grant', () => {
    spec.given([]).when({ type: 'GrantCredit', at: AT, userId: 2, amount: 10, grantedBy: 1, note: null }).then([granted(10)]);
    spec.given([]).when({ type: 'GrantCredit', at: AT, userId: 2, amount: -1, grantedBy: 1, note: null }).thenThrows(LedgerErrors.invalidAmount);
  });

  it('charges while credit remains', () => {
    spec.given([granted(10)]).when(charge(2.5)).then([charged(2.5)]);
  });

  it('announces exhaustion once, when a charge takes the balance to zero or below', () => {
    spec.given([granted(1)]).when(charge(1)).then([charged(1), { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } }]);
    spec
      .given([granted(1), charged(1), { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } }])
      .when(charge(0.5))
      .then([charged(0.5)]);
    // a grant lifts the exhaustion: the next one is announced again
    spec
      .given([granted(1), charged(1), { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } }, granted(1)])
      .when(charge(2))
      .then([charged(2), { type: 'CreditExhausted', data: { userId: 2, balance: -1, at: AT } }]);
  });

  it('ignores a zero charge', () => {
    spec.given([granted(1)]).when(charge(0)).thenNothingHappened();
  });
});

describe('usage charges', () => {
  it('prorates dph_total by the second while running, storage only while stopped, nothing once destroyed', () => {
    expect(usageCharge('running', { dphTotal: 3.6, storageDph: 0.01 }, 10)).toBe(0.01);
    expect(usageCharge('stopped', { dphTotal: 3.6, storageDph: 0.036 }, 100)).toBe(0.001);
    expect(usageCharge('destroyed', { dphTotal: 3.6, storageDph: 0.036 }, 100)).toBe(0);
  });
});
