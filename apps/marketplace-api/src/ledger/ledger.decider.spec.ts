import type { LedgerEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { LedgerErrors, chargeFor, ledgerDecider } from './ledger.decider';

const AT = '2026-05-01T12:00:00.000Z';
const granted = (amount: number): LedgerEvent => ({
  type: 'CreditGranted',
  data: { userId: 2, amount, grantedBy: 1, note: null, at: AT },
});
/** Hour n of instance 9 (hour 0 ends at AT). */
const hour = (n: number) => ({
  periodStart: new Date(Date.parse(AT) + (n - 1) * 3_600_000).toISOString(),
  periodEnd: new Date(Date.parse(AT) + n * 3_600_000).toISOString(),
});
const charge = (amount: number, n = 0) => ({
  type: 'Charge' as const,
  at: AT,
  userId: 2,
  instanceId: 9,
  machineId: 42,
  hostId: 7,
  kind: 'gpu' as const,
  amount,
  ...hour(n),
});
const charged = (amount: number, n = 0): LedgerEvent => ({
  type: 'AccountCharged',
  data: { userId: 2, instanceId: 9, machineId: 42, kind: 'gpu', amount, ...hour(n), at: AT, hostId: 7 },
});
/** On the host's (user 7) ledger: its earning from the charge with event id `chargeId`. */
const earn = (chargeId: string, amount = 0.5) => ({
  type: 'RecordEarning' as const,
  at: AT,
  userId: 7,
  chargeId,
  instanceId: 9,
  machineId: 42,
  amount,
});
const earned = (chargeId: string, amount = 0.5): LedgerEvent => ({
  type: 'HostEarned',
  data: { userId: 7, machineId: 42, instanceId: 9, amount, at: AT, chargeId },
});
const spec = deciderSpec(ledgerDecider);

describe('ledger decider', () => {
  it('grants credit; refuses a zero or negative grant', () => {
    spec
      .given([])
      .when({ type: 'GrantCredit', at: AT, userId: 2, amount: 10, grantedBy: 1, note: null })
      .then([granted(10)]);
    spec
      .given([])
      .when({ type: 'GrantCredit', at: AT, userId: 2, amount: -1, grantedBy: 1, note: null })
      .thenThrows(LedgerErrors.invalidAmount);
  });

  it('charges while credit remains', () => {
    spec
      .given([granted(10)])
      .when(charge(2.5))
      .then([charged(2.5)]);
  });

  it('announces exhaustion once, when a charge takes the balance to zero or below', () => {
    spec
      .given([granted(1)])
      .when(charge(1))
      .then([charged(1), { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } }]);
    spec
      .given([granted(1), charged(1), { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } }])
      .when(charge(0.5, 1))
      .then([charged(0.5, 1)]);
    // a grant lifts the exhaustion: the next one is announced again
    spec
      .given([
        granted(1),
        charged(1),
        { type: 'CreditExhausted', data: { userId: 2, balance: 0, at: AT } },
        granted(1),
      ])
      .when(charge(2, 1))
      .then([charged(2, 1), { type: 'CreditExhausted', data: { userId: 2, balance: -1, at: AT } }]);
  });

  it('never charges a period of an instance twice (a retried or concurrent billing run)', () => {
    spec
      .given([granted(10), charged(1)])
      .when(charge(1))
      .thenThrows(LedgerErrors.alreadyBilled);
    spec
      .given([granted(10), charged(1, 1)])
      .when(charge(1))
      .thenThrows(LedgerErrors.alreadyBilled);
    spec
      .given([granted(10), charged(1)])
      .when(charge(1, 1))
      .then([charged(1, 1)]);
  });

  it('records a host earning once per charge, however often the charge is delivered', () => {
    spec
      .given([])
      .when(earn('charge-1'))
      .then([earned('charge-1')]);
    spec
      .given([earned('charge-1')])
      .when(earn('charge-1'))
      .thenNothingHappened();
    spec
      .given([earned('charge-1')])
      .when(earn('charge-2', 0.25))
      .then([earned('charge-2', 0.25)]);
    expect(
      [earned('charge-1'), earned('charge-2', 0.25)].reduce(
        ledgerDecider.evolve,
        ledgerDecider.initialState(),
      ).balance,
    ).toBe(0.75);
  });

  it('ignores a zero charge', () => {
    spec
      .given([granted(1)])
      .when(charge(0))
      .thenNothingHappened();
  });
});

describe('period charges', () => {
  it('prorates the rate by the second, rounded to a millionth of a dollar', () => {
    const at = (s: number) => new Date(Date.parse(AT) + s * 1000);
    expect(chargeFor(3.6, at(0), at(10))).toBe(0.01);
    expect(chargeFor(0.036, at(0), at(100))).toBe(0.001);
    expect(chargeFor(0.75, at(0), at(3600))).toBe(0.75);
    expect(chargeFor(3.6, at(10), at(0))).toBe(0);
  });
});
