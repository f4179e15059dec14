import {
  DomainError,
  type LedgerEvent,
  MAX_LEDGER_AMOUNT_MICROS,
  MICROS_PER_DOLLAR,
  MONEY_LIMITS,
} from '@rigmarket/contracts';

/** Amounts are integer micro-dollars (contracts' money.ts): sums are exact integer sums. */
export interface LedgerState {
  /** In micros. */
  balance: number;
  /** A CreditExhausted was emitted and no grant has lifted the balance above zero since. */
  exhausted: boolean;
  /** Per instance, the end of its last charged period (ISO): a period is never charged twice. */
  billedUntil: Record<number, string>;
  /**
   * Per prepaid instance, its deposit in micros (what is left of its prepayments), and whether it was closed
   * (the instance was destroyed: the rest went back to the balance and no prepayment is taken any more).
   */
  deposits: Record<number, { micros: number; closed: boolean }>;
}

/** One billing period of one instance, charged to its renter (the command's `userId`). */
export interface UsageCharge {
  instanceId: number;
  machineId: number;
  hostId: number;
  kind: 'gpu' | 'storage';
  amountMicros: number;
  periodStart: string;
  periodEnd: string;
}

/** One charge a host earns (the AccountCharged's event id is `chargeId`). */
export interface EarningItem {
  chargeId: string;
  instanceId: number;
  machineId: number;
  amountMicros: number;
}

/** At most this many charges or earnings in one ChargeRun or RecordEarnings (one transaction). */
export const MAX_LEDGER_BATCH = 500;

export type LedgerCommand = { at: string; userId: number } & (
  | { type: 'GrantCredit'; amountMicros: number; grantedBy: number; note: string | null }
  | ({ type: 'Charge' } & UsageCharge)
  /**
   * A billing run's charges of one renter, in one transaction: each charged as `Charge` would in turn,
   * except that a period already billed (another meter was first) is left out instead of refusing the rest.
   */
  | { type: 'ChargeRun'; charges: UsageCharge[] }
  | ({
      type: 'RecordEarning';
      /** The host's ledger already holds a HostEarned of this charge (looked up by the handler: earned-charges.ts). */
      alreadyEarned: boolean;
    } & EarningItem)
  /**
   * Several charges' earnings of one host, in one transaction; `alreadyEarned` lists the chargeIds the host's
   * ledger already holds (looked up by the handler), which earn nothing more.
   */
  | { type: 'RecordEarnings'; earnings: EarningItem[]; alreadyEarned: string[] }
  /** `userId` sends: refused unless its balance covers the amount (it never goes below zero). */
  | { type: 'TransferCredit'; recipientId: number; amountMicros: number }
  /** `userId` receives a CreditTransferred (`transferId`, its event id), once. */
  /** `userId` moves credit into the deposit of its instance `instanceId` (refused beyond the balance). */
  | { type: 'PrepayInstance'; instanceId: number; amountMicros: number }
  /**
   * The instance was destroyed: its `charges` up to the destroy are charged (from the deposit first, as in a
   * ChargeRun), then the deposit's rest returns to the balance and the deposit is closed.
   */
  | { type: 'CloseDeposit'; instanceId: number; charges: UsageCharge[] }
  | {
      type: 'ReceiveCredit';
      senderId: number;
      transferId: string;
      amountMicros: number;
      /** The recipient's ledger already holds this transfer (looked up by the handler: earned-charges.ts). */
      alreadyReceived: boolean;
    }
);

export const LedgerErrors = {
  invalidAmount: 'invalid_amount',
  alreadyBilled: 'already_billed',
  insufficientCredit: 'insufficient_credit',
  badRequest: 'bad_request',
  noSuchInstance: 'no_such_instance',
} as const;

const MAX_GRANT_MICROS = MONEY_LIMITS.creditGrant * MICROS_PER_DOLLAR;
const MAX_BALANCE_MICROS = MONEY_LIMITS.balance * MICROS_PER_DOLLAR;
const MAX_TRANSFER_MICROS = MONEY_LIMITS.creditTransfer * MICROS_PER_DOLLAR;
const MAX_PREPAY_MICROS = MONEY_LIMITS.instancePrepay * MICROS_PER_DOLLAR;

export const initialState = (): LedgerState => ({
  balance: 0,
  exhausted: false,
  billedUntil: {},
  deposits: {},
});

/**
 * Updates `state.billedUntil` in place (the runner owns the state it folds: command-runner.ts), so an event
 * costs the same however long the history: copying the lookup per event made a fold quadratic.
 */
export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  switch (event.type) {
    case 'CreditGranted':
    case 'CreditReceived': {
      const balance = state.balance + event.data.amountMicros;
      return { ...state, balance, exhausted: state.exhausted && balance <= 0 };
    }
    case 'CreditTransferred':
      return { ...state, balance: state.balance - event.data.amountMicros };
    case 'AccountCharged': {
      const previous = state.billedUntil[event.data.instanceId];
      const until =
        previous !== undefined && previous > event.data.periodEnd ? previous : event.data.periodEnd;
      state.billedUntil[event.data.instanceId] = until;
      return { ...state, balance: state.balance - event.data.amountMicros };
    }
    case 'HostEarned': {
      const balance = state.balance + event.data.amountMicros;
      return { ...state, balance };
    }
    case 'CreditExhausted':
      return { ...state, exhausted: true };
    case 'InstancePrepaid': {
      const deposit = state.deposits[event.data.instanceId] ?? { micros: 0, closed: false };
      state.deposits[event.data.instanceId] = {
        ...deposit,
        micros: deposit.micros + event.data.amountMicros,
      };
      return { ...state, balance: state.balance - event.data.amountMicros };
    }
    case 'DepositDrawn':
    case 'DepositRefunded': {
      const deposit = state.deposits[event.data.instanceId] ?? { micros: 0, closed: false };
      state.deposits[event.data.instanceId] = {
        micros: deposit.micros - event.data.amountMicros,
        closed: deposit.closed || event.type === 'DepositRefunded',
      };
      const balance = state.balance + event.data.amountMicros;
      return { ...state, balance, exhausted: state.exhausted && balance <= 0 };
    }
  }
}

/** An integer number of micros in [0, max] ((0, max] unless allowZero), else 400 invalid_amount. */
function micros(amount: number, max: number, what: string, allowZero = false): void {
  if (!Number.isSafeInteger(amount) || amount < 0 || (!allowZero && amount === 0) || amount > max) {
    throw new DomainError(
      LedgerErrors.invalidAmount,
      `${what} must be a positive amount of at most $${(max / MICROS_PER_DOLLAR).toLocaleString('en-US')}`,
    );
  }
}

export function decide(command: LedgerCommand, state: LedgerState): LedgerEvent[] {
  switch (command.type) {
    case 'GrantCredit':
      micros(command.amountMicros, MAX_GRANT_MICROS, 'amount');
      if (state.balance + command.amountMicros > MAX_BALANCE_MICROS) {
        throw new DomainError(
          LedgerErrors.invalidAmount,
          `A balance may not exceed $${MONEY_LIMITS.balance.toLocaleString('en-US')}: this grant would take it past that`,
        );
      }
      return [
        {
          type: 'CreditGranted',
          data: {
            userId: command.userId,
            amountMicros: command.amountMicros,
            grantedBy: command.grantedBy,
            note: command.note,
            at: command.at,
          },
        },
      ];
    case 'Charge': {
      const refusal = alreadyBilled(command, state.billedUntil[command.instanceId]);
      if (refusal) throw refusal;
      return charges(command.userId, command.at, [command], state);
    }
    case 'ChargeRun':
      bounded(command.charges.length);
      return charges(command.userId, command.at, command.charges, state);
    case 'RecordEarning':
      return earnings(command.userId, command.at, [command], command.alreadyEarned ? [command.chargeId] : []);
    case 'RecordEarnings':
      bounded(command.earnings.length);
      return earnings(command.userId, command.at, command.earnings, command.alreadyEarned);
    case 'TransferCredit':
      return transfer(command, state);
    case 'PrepayInstance':
      return prepay(command, state);
    case 'CloseDeposit':
      return closeDeposit(command, state);
    case 'ReceiveCredit': {
      micros(command.amountMicros, MAX_TRANSFER_MICROS, 'a transfer');
      if (command.alreadyReceived) return [];
      return [
        {
          type: 'CreditReceived',
          data: {
            userId: command.userId,
            senderId: command.senderId,
            amountMicros: command.amountMicros,
            transferId: command.transferId,
            at: command.at,
          },
        },
      ];
    }
  }
}

function bounded(count: number): void {
  if (count > MAX_LEDGER_BATCH)
    throw new DomainError(LedgerErrors.badRequest, `At most ${MAX_LEDGER_BATCH} charges or earnings at once`);
}

/**
 * Checks a charge's amount (400 invalid_amount, thrown) and answers the refusal of a period that starts before
 * the instance's last charged end (409 already_billed), if it is one.
 */
function alreadyBilled(charge: UsageCharge, billedUntil: string | undefined): DomainError | undefined {
  micros(charge.amountMicros, MAX_LEDGER_AMOUNT_MICROS, 'a charge', true);
  if (billedUntil !== undefined && new Date(charge.periodStart) < new Date(billedUntil))
    return new DomainError(
      LedgerErrors.alreadyBilled,
      `instance ${charge.instanceId} is already billed until ${billedUntil}`,
    );
  return undefined;
}

/**
 * The renter's charges in turn, as one Charge after another would record them: an AccountCharged each (none
 * for 0 or a period already billed), a DepositDrawn after it for the part the instance's deposit pays (all of
 * it while the deposit lasts), and a CreditExhausted right after the charge that takes the balance to zero or
 * below, once (unless it already was). Pure: the state is read, never written.
 */
function charges(
  userId: number,
  at: string,
  list: readonly UsageCharge[],
  state: LedgerState,
): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  const billed = new Map<number, string>();
  const deposits = new Map<number, number>();
  let balance = state.balance;
  let exhausted = state.exhausted;
  for (const charge of list) {
    const until = billed.get(charge.instanceId) ?? state.billedUntil[charge.instanceId];
    if (alreadyBilled(charge, until) || charge.amountMicros === 0) continue;
    events.push({
      type: 'AccountCharged',
      data: {
        userId,
        instanceId: charge.instanceId,
        machineId: charge.machineId,
        kind: charge.kind,
        amountMicros: charge.amountMicros,
        periodStart: charge.periodStart,
        periodEnd: charge.periodEnd,
        at,
        hostId: charge.hostId,
      },
    });
    billed.set(charge.instanceId, until !== undefined && until > charge.periodEnd ? until : charge.periodEnd);
    balance -= charge.amountMicros;
    const deposit = deposits.get(charge.instanceId) ?? state.deposits[charge.instanceId]?.micros ?? 0;
    const drawn = Math.min(deposit, charge.amountMicros);
    if (drawn > 0) {
      events.push({
        type: 'DepositDrawn',
        data: { userId, instanceId: charge.instanceId, amountMicros: drawn, at },
      });
      deposits.set(charge.instanceId, deposit - drawn);
      balance += drawn;
    }
    // A charge the deposit covers in full leaves the credit as it was: it exhausts nothing.
    if (drawn < charge.amountMicros && balance <= 0 && !exhausted) {
      events.push({ type: 'CreditExhausted', data: { userId, balanceMicros: balance, at } });
      exhausted = true;
    }
  }
  return events;
}

/** A HostEarned per charge not yet earned (idempotent per charge: the reactor runs at least once). */
function earnings(
  userId: number,
  at: string,
  list: readonly EarningItem[],
  alreadyEarned: readonly string[],
): LedgerEvent[] {
  const earned = new Set(alreadyEarned);
  const events: LedgerEvent[] = [];
  for (const item of list) {
    micros(item.amountMicros, MAX_LEDGER_AMOUNT_MICROS, 'an earning', true);
    if (item.amountMicros === 0 || earned.has(item.chargeId)) continue;
    earned.add(item.chargeId);
    events.push({
      type: 'HostEarned',
      data: {
        userId,
        machineId: item.machineId,
        instanceId: item.instanceId,
        amountMicros: item.amountMicros,
        at,
        chargeId: item.chargeId,
      },
    });
  }
  return events;
}

function transfer(
  command: Extract<LedgerCommand, { type: 'TransferCredit' }>,
  state: LedgerState,
): LedgerEvent[] {
  micros(command.amountMicros, MAX_TRANSFER_MICROS, 'amount');
  if (command.recipientId === command.userId)
    throw new DomainError(LedgerErrors.badRequest, 'The recipient is this account: nothing to transfer');
  if (state.balance < command.amountMicros)
    throw new DomainError(
      LedgerErrors.insufficientCredit,
      `The balance ($${state.balance / MICROS_PER_DOLLAR}) does not cover a transfer of $${command.amountMicros / MICROS_PER_DOLLAR}`,
    );
  return [
    {
      type: 'CreditTransferred',
      data: {
        userId: command.userId,
        recipientId: command.recipientId,
        amountMicros: command.amountMicros,
        at: command.at,
      },
    },
  ];
}

function closeDeposit(
  command: Extract<LedgerCommand, { type: 'CloseDeposit' }>,
  state: LedgerState,
): LedgerEvent[] {
  const deposit = state.deposits[command.instanceId];
  if (!deposit || deposit.closed) return [];
  bounded(command.charges.length);
  const final = charges(
    command.userId,
    command.at,
    command.charges.filter((c) => c.instanceId === command.instanceId),
    state,
  );
  const drawn = final.reduce((sum, e) => sum + (e.type === 'DepositDrawn' ? e.data.amountMicros : 0), 0);
  const rest = deposit.micros - drawn;
  if (rest <= 0) return final;
  return [
    ...final,
    {
      type: 'DepositRefunded',
      data: { userId: command.userId, instanceId: command.instanceId, amountMicros: rest, at: command.at },
    },
  ];
}

/** Prepayment: a positive bounded amount, covered by the balance, into a deposit not closed. */
function prepay(
  command: Extract<LedgerCommand, { type: 'PrepayInstance' }>,
  state: LedgerState,
): LedgerEvent[] {
  micros(command.amountMicros, MAX_PREPAY_MICROS, 'amount');
  if (state.deposits[command.instanceId]?.closed)
    throw new DomainError(
      LedgerErrors.noSuchInstance,
      `Instance ${command.instanceId} was destroyed: its deposit is closed`,
    );
  if (state.balance < command.amountMicros)
    throw new DomainError(
      LedgerErrors.insufficientCredit,
      `The balance ($${state.balance / MICROS_PER_DOLLAR}) does not cover a prepayment of $${command.amountMicros / MICROS_PER_DOLLAR}`,
    );
  return [
    {
      type: 'InstancePrepaid',
      data: {
        userId: command.userId,
        instanceId: command.instanceId,
        amountMicros: command.amountMicros,
        at: command.at,
      },
    },
  ];
}

/**
 * Ledger streams grow by one event per billing period per instance: a snapshot every 50 events keeps every
 * command's fold under 50 events. Bump `version` whenever LedgerState or evolve changes (older snapshots are
 * then ignored and replaced).
 */
export const ledgerSnapshot = { version: 2, every: 50 };

export const ledgerDecider = { initialState, evolve, decide, snapshot: ledgerSnapshot };
export const ledgerStreamId = (userId: number): string => `ledger-${userId}`;

/** What a period at a rate (micros per hour) costs, in micros: prorated by the millisecond, rounded once. */
export function chargeFor(rateMicrosPerHour: number, from: Date, to: Date): number {
  const ms = Math.max(0, to.getTime() - from.getTime());
  return Math.round((rateMicrosPerHour * ms) / 3_600_000);
}
