import { type EventEnvelope, type LedgerEvent, upcast } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { LedgerErrors, chargeFor, ledgerDecider } from './ledger.decider';

const AT = '2026-05-01T12:00:00.000Z';
/** Dollars in the test, micros on the ledger. */
const $ = (dollars: number) => Math.round(dollars * 1e6);
const granted = (amount: number): LedgerEvent => ({
  type: 'CreditGranted',
  data: { userId: 2, amountMicros: $(amount), grantedBy: 1, note: null, at: AT },
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
  amountMicros: $(amount),
  ...hour(n),
});
const charged = (amount: number, n = 0): LedgerEvent => ({
  type: 'AccountCharged',
  data: {
    userId: 2,
    instanceId: 9,
    machineId: 42,
    kind: 'gpu',
    amountMicros: $(amount),
    ...hour(n),
    at: AT,
    hostId: 7,
  },
});
/** On the host's (user 7) ledger: its earning from the charge with event id `chargeId`. */
const earn = (chargeId: string, amount = 0.5, alreadyEarned = false) => ({
  type: 'RecordEarning' as const,
  at: AT,
  userId: 7,
  chargeId,
  instanceId: 9,
  machineId: 42,
  amountMicros: $(amount),
  alreadyEarned,
});
const earned = (chargeId: string, amount = 0.5): LedgerEvent => ({
  type: 'HostEarned',
  data: { userId: 7, machineId: 42, instanceId: 9, amountMicros: $(amount), at: AT, chargeId },
});
const spec = deciderSpec(ledgerDecider);

describe('ledger decider', () => {
  it('grants credit; refuses a zero or negative grant', () => {
    spec
      .given([])
      .when({ type: 'GrantCredit', at: AT, userId: 2, amountMicros: $(10), grantedBy: 1, note: null })
      .then([granted(10)]);
    for (const amountMicros of [$(-1), 0, 0.5, Infinity, NaN]) {
      spec
        .given([])
        .when({ type: 'GrantCredit', at: AT, userId: 2, amountMicros, grantedBy: 1, note: null })
        .thenThrows(LedgerErrors.invalidAmount);
    }
  });

  it('bounds a grant ($1,000,000) and the balance it leads to ($1,000,000,000)', () => {
    spec
      .given([])
      .when({ type: 'GrantCredit', at: AT, userId: 2, amountMicros: $(1_000_000), grantedBy: 1, note: null })
      .then([granted(1_000_000)]);
    spec
      .given([])
      .when({ type: 'GrantCredit', at: AT, userId: 2, amountMicros: $(1_000_001), grantedBy: 1, note: null })
      .thenThrows(LedgerErrors.invalidAmount);
    spec
      .given(Array.from({ length: 1000 }, () => granted(1_000_000)))
      .when({ type: 'GrantCredit', at: AT, userId: 2, amountMicros: 1, grantedBy: 1, note: null })
      .thenThrows(LedgerErrors.invalidAmount);
  });

  it('adds micros exactly: ten grants of $0.10 and three charges of $0.10 leave exactly $0.70', () => {
    const history = [
      ...Array.from({ length: 10 }, () => granted(0.1)),
      charged(0.1, 1),
      charged(0.1, 2),
      charged(0.1, 3),
    ];
    expect(history.reduce(ledgerDecider.evolve, ledgerDecider.initialState()).balance).toBe(700_000);
  });

  it('folds version 1 events (float dollars) upcast to micros, voiding amounts beyond the limits', () => {
    const v1 = (type: string, data: Record<string, unknown>): LedgerEvent => {
      const envelope = { type, schemaVersion: 1, context: 'marketplace', data } as unknown as EventEnvelope;
      const up = upcast(envelope);
      return { type: up.type, data: up.data } as LedgerEvent;
    };
    const history = [
      v1('CreditGranted', { userId: 2, amount: 10.1, grantedBy: 1, note: null, at: AT }),
      v1('AccountCharged', { ...charged(0).data, amountMicros: undefined, amount: 0.300001 }),
      v1('AccountCharged', { ...charged(1).data, amountMicros: undefined, amount: 1e308 }),
    ];
    expect(history[1]!.data).toMatchObject({ amountMicros: 300_001 });
    expect(history[1]!.data).not.toHaveProperty('amount');
    expect(history[2]!.data).toMatchObject({ amountMicros: 0 });
    expect(history.reduce(ledgerDecider.evolve, ledgerDecider.initialState()).balance).toBe(9_799_999);
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
      .then([charged(1), { type: 'CreditExhausted', data: { userId: 2, balanceMicros: 0, at: AT } }]);
    spec
      .given([
        granted(1),
        charged(1),
        { type: 'CreditExhausted', data: { userId: 2, balanceMicros: 0, at: AT } },
      ])
      .when(charge(0.5, 1))
      .then([charged(0.5, 1)]);
    // a grant lifts the exhaustion: the next one is announced again
    spec
      .given([
        granted(1),
        charged(1),
        { type: 'CreditExhausted', data: { userId: 2, balanceMicros: 0, at: AT } },
        granted(1),
      ])
      .when(charge(2, 1))
      .then([charged(2, 1), { type: 'CreditExhausted', data: { userId: 2, balanceMicros: $(-1), at: AT } }]);
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
    // The handler looked the charge up in the event store and found its earning.
    spec
      .given([earned('charge-1')])
      .when(earn('charge-1', 0.5, true))
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
    ).toBe($(0.75));
  });

  it("charges a billing run's periods of one renter together, as one charge after another would", () => {
    const run = (...charges: ReturnType<typeof charge>[]) => ({
      type: 'ChargeRun' as const,
      at: AT,
      userId: 2,
      charges: charges.map(({ type: _type, at: _at, userId: _userId, ...c }) => c),
    });
    const other = (amount: number, n = 0) => ({ ...charge(amount, n), instanceId: 10 });
    const otherCharged = (amount: number, n = 0): LedgerEvent => {
      const event = charged(amount, n) as Extract<LedgerEvent, { type: 'AccountCharged' }>;
      return { ...event, data: { ...event.data, instanceId: 10 } };
    };
    // Exhaustion announced once, right after the charge that crosses zero; the charges after it still recorded.
    spec
      .given([granted(1)])
      .when(run(charge(0.75), other(0.5), charge(0.25, 1)))
      .then([
        charged(0.75),
        otherCharged(0.5),
        { type: 'CreditExhausted', data: { userId: 2, balanceMicros: $(-0.25), at: AT } },
        charged(0.25, 1),
      ]);
    // A period already billed (another meter was first) is left out; the others are charged; zero is skipped.
    spec
      .given([granted(10), charged(1)])
      .when(run(charge(1), other(0), other(0.5), charge(1, 1)))
      .then([otherCharged(0.5), charged(1, 1)]);
    // The same period twice in one run: charged once.
    spec
      .given([granted(10)])
      .when(run(charge(1), charge(1)))
      .then([charged(1)]);
    // Bounded, and an amount beyond the ledger's limit refuses the whole run (the meter then charges one by one).
    spec
      .given([granted(10)])
      .when(run(...Array.from({ length: 501 }, (_, n) => charge(0.01, n))))
      .thenThrows(LedgerErrors.badRequest);
    spec
      .given([granted(10)])
      .when(run(charge(1), other(2_000_000_000)))
      .thenThrows(LedgerErrors.invalidAmount);
  });

  it("records a batch of a host's earnings, each charge once", () => {
    const earnings = (alreadyEarned: string[], ...ids: string[]) => ({
      type: 'RecordEarnings' as const,
      at: AT,
      userId: 7,
      earnings: ids.map((chargeId) => ({ chargeId, instanceId: 9, machineId: 42, amountMicros: $(0.5) })),
      alreadyEarned,
    });
    spec
      .given([])
      .when(earnings(['charge-2'], 'charge-1', 'charge-2', 'charge-3', 'charge-1'))
      .then([earned('charge-1'), earned('charge-3')]);
    spec
      .given([])
      .when(earnings(['charge-1'], 'charge-1'))
      .thenNothingHappened();
  });

  it('ignores a zero charge', () => {
    spec
      .given([granted(1)])
      .when(charge(0))
      .thenNothingHappened();
  });
});

describe('ledger fold', () => {
  it('folds a long history into the same state event by event, without copying what it has seen', () => {
    const history: LedgerEvent[] = [granted(10_000)];
    for (let n = 1; n <= 5000; n += 1) {
      history.push({
        ...charged(0.5, n),
        data: { ...(charged(0.5, n).data as object), instanceId: n % 7 },
      } as LedgerEvent);
    }
    const state = history.reduce(ledgerDecider.evolve, ledgerDecider.initialState());
    expect(state.balance).toBe($(7500));
    expect(Object.keys(state.billedUntil)).toHaveLength(7);
    expect(state.billedUntil[5000 % 7]).toBe(hour(5000).periodEnd);
    // A snapshot is this state as JSON: it folds on to the same result.
    const resumed = [charged(1, 5001)].reduce(ledgerDecider.evolve, JSON.parse(JSON.stringify(state)));
    expect(resumed).toEqual([charged(1, 5001)].reduce(ledgerDecider.evolve, state));
  });
});

describe('period charges', () => {
  it('prorates the rate (micros per hour) by the millisecond, rounded to a micro-dollar', () => {
    const at = (s: number) => new Date(Date.parse(AT) + s * 1000);
    expect(chargeFor($(3.6), at(0), at(10))).toBe($(0.01));
    expect(chargeFor($(0.036), at(0), at(100))).toBe($(0.001));
    expect(chargeFor($(0.75), at(0), at(3600))).toBe($(0.75));
    expect(chargeFor($(3.6), at(10), at(0))).toBe(0);
    // the dearest instance the limits allow (999 GPUs at $1,000/h), billed for a day, stays an exact integer
    expect(Number.isSafeInteger(chargeFor($(999_000), at(0), at(86_400)))).toBe(true);
  });

  describe('credit transfers', () => {
    const send = (amount: number, recipientId = 5) => ({
      type: 'TransferCredit' as const,
      at: AT,
      userId: 2,
      recipientId,
      amountMicros: typeof amount === 'number' && Number.isFinite(amount) ? $(amount) : amount,
    });
    const sent = (amount: number): LedgerEvent => ({
      type: 'CreditTransferred',
      data: { userId: 2, recipientId: 5, amountMicros: $(amount), at: AT },
    });
    const receive = (transferId: string, alreadyReceived = false) => ({
      type: 'ReceiveCredit' as const,
      at: AT,
      userId: 5,
      senderId: 2,
      transferId,
      amountMicros: $(2.5),
      alreadyReceived,
    });

    it('sends up to the whole balance, never below zero', () => {
      spec
        .given([granted(10)])
        .when(send(10))
        .then([sent(10)]);
      spec
        .given([granted(10), sent(4)])
        .when(send(6.000001))
        .thenThrows(LedgerErrors.insufficientCredit);
      spec.given([]).when(send(0.01)).thenThrows(LedgerErrors.insufficientCredit);
      expect([granted(10), sent(4)].reduce(ledgerDecider.evolve, ledgerDecider.initialState()).balance).toBe(
        $(6),
      );
    });

    it('refuses a zero, negative, fractional-micro or unbounded amount, and a transfer to oneself', () => {
      for (const amountMicros of [0, $(-1), 0.5, Infinity, NaN, $(1_000_001)]) {
        spec
          .given([granted(1_000_000), granted(1_000_000)])
          .when({ type: 'TransferCredit', at: AT, userId: 2, recipientId: 5, amountMicros })
          .thenThrows(LedgerErrors.invalidAmount);
      }
      spec
        .given([granted(10)])
        .when(send(1, 2))
        .thenThrows(LedgerErrors.badRequest);
    });

    it('receives a transfer once; a received transfer lifts an exhausted account', () => {
      const received: LedgerEvent = {
        type: 'CreditReceived',
        data: { userId: 5, senderId: 2, amountMicros: $(2.5), transferId: 't-1', at: AT },
      };
      spec.given([]).when(receive('t-1')).then([received]);
      spec.given([received]).when(receive('t-1', true)).then([]);
      const exhausted: LedgerEvent = {
        type: 'CreditExhausted',
        data: { userId: 5, balanceMicros: 0, at: AT },
      };
      const state = [exhausted, received].reduce(ledgerDecider.evolve, ledgerDecider.initialState());
      expect(state).toMatchObject({ balance: $(2.5), exhausted: false });
    });
  });

  describe('instance deposits (prepay instance)', () => {
    const deposit = (
      type: 'InstancePrepaid' | 'DepositDrawn' | 'DepositRefunded',
      amount: number,
    ): LedgerEvent => ({
      type,
      data: { userId: 2, instanceId: 9, amountMicros: $(amount), at: AT },
    });
    const prepay = (amount: number) => ({
      type: 'PrepayInstance' as const,
      at: AT,
      userId: 2,
      instanceId: 9,
      amountMicros: $(amount),
    });
    const usage = {
      instanceId: 9,
      machineId: 42,
      hostId: 7,
      kind: 'gpu' as const,
      amountMicros: $(0.75),
      ...hour(1),
    };
    const close = (...charges: (typeof usage)[]) => ({
      type: 'CloseDeposit' as const,
      at: AT,
      userId: 2,
      instanceId: 9,
      charges,
    });

    it('moves credit into the deposit, up to the balance; refuses a bad amount and a closed deposit', () => {
      spec
        .given([granted(10)])
        .when(prepay(10))
        .then([deposit('InstancePrepaid', 10)]);
      spec
        .given([granted(10)])
        .when(prepay(10.01))
        .thenThrows(LedgerErrors.insufficientCredit);
      for (const amountMicros of [0, $(-1), 0.5, NaN, $(1_000_001)])
        spec
          .given([granted(1_000_000), granted(1_000_000)])
          .when({ ...prepay(1), amountMicros })
          .thenThrows(LedgerErrors.invalidAmount);
      spec
        .given([granted(10), deposit('InstancePrepaid', 2), deposit('DepositRefunded', 2)])
        .when(prepay(1))
        .thenThrows(LedgerErrors.noSuchInstance);
      const state = [granted(10), deposit('InstancePrepaid', 4)].reduce(
        ledgerDecider.evolve,
        ledgerDecider.initialState(),
      );
      expect(state).toMatchObject({ balance: $(6), deposits: { 9: { micros: $(4), closed: false } } });
    });

    it("pays the instance's charges from its deposit first, then from the credit", () => {
      spec
        .given([granted(10), deposit('InstancePrepaid', 1)])
        .when(charge(0.75, 1))
        .then([charged(0.75, 1), deposit('DepositDrawn', 0.75)]);
      // 0.25 left in the deposit: the next hour's 0.75 takes it, and 0.5 from the credit (9 -> 8.5)
      const history = [
        granted(10),
        deposit('InstancePrepaid', 1),
        charged(0.75, 1),
        deposit('DepositDrawn', 0.75),
      ];
      spec
        .given(history)
        .when(charge(0.75, 2))
        .then([charged(0.75, 2), deposit('DepositDrawn', 0.25)]);
      const state = [...history, charged(0.75, 2), deposit('DepositDrawn', 0.25)].reduce(
        ledgerDecider.evolve,
        ledgerDecider.initialState(),
      );
      expect(state).toMatchObject({ balance: $(8.5), deposits: { 9: { micros: 0 } } });
      // a deposit that covers a charge keeps an empty account from being exhausted
      spec
        .given([granted(1), deposit('InstancePrepaid', 1)])
        .when(charge(0.75, 1))
        .then([charged(0.75, 1), deposit('DepositDrawn', 0.75)]);
    });

    it('on destroy, charges the last period from the deposit and refunds the rest once', () => {
      spec
        .given([granted(10), deposit('InstancePrepaid', 5)])
        .when(close(usage))
        .then([charged(0.75, 1), deposit('DepositDrawn', 0.75), deposit('DepositRefunded', 4.25)]);
      const closed = [granted(10), deposit('InstancePrepaid', 5), deposit('DepositRefunded', 5)];
      spec.given(closed).when(close()).then([]);
      const state = closed.reduce(ledgerDecider.evolve, ledgerDecider.initialState());
      expect(state).toMatchObject({ balance: $(10), deposits: { 9: { micros: 0, closed: true } } });
      // no deposit: nothing to refund
      spec
        .given([granted(10)])
        .when(close(usage))
        .then([]);
    });
  });
});
